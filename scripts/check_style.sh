#!/usr/bin/env bash
# Style checks (house-style §7): clang-format, banned functions, exported symbol prefixes, the
# harness's include layers.
# Usage: scripts/check_style.sh [BUILD_DIR]   (the symbol check needs a build; skipped without)
set -u
cd "$(dirname "$0")/.." || exit 1
status=0
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find src include tests bench -name '*.[ch]')

if command -v clang-format >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  log=$(mktemp)
  if ! clang-format --dry-run -Werror $files 2>"$log"; then
    echo "clang-format: these files need formatting (clang-format -i FILE):"
    grep -Eo '^[^: ]+\.[ch]:[0-9]+:[0-9]+: (error|warning)' "$log" | cut -d: -f1 | sort -u
    status=1
  fi
  rm -f "$log"
else
  echo "clang-format not installed: formatting not checked"
fi

# Banned functions (curl's BANNEDFUNC; darknet's atoi config parsing is the reason).
banned='\b(sprintf|vsprintf|strcat|strncat|gets|strtok|atoi|atof)[[:space:]]*\('
# shellcheck disable=SC2086
if grep -nE "$banned" $files | grep -v 'check_style: allow'; then
  echo "banned functions used (see above); use snprintf, strto* with end-pointer checks"
  status=1
fi

# Every global text/data symbol of our libraries starts with eb_ (__* are the compiler's).
build=${1:-build}
if ls "$build"/src/*.a >/dev/null 2>&1; then
  bad=$(nm -g --defined-only "$build"/src/*.a 2>/dev/null |
        awk 'NF == 3 && $2 ~ /[TDBR]/ {print $3}' | grep -vE '^(eb_|__)' | sort -u)
  if [ -n "$bad" ]; then
    echo "global symbols without the eb_ prefix (make them static or rename):"
    echo "$bad"
    status=1
  fi
fi
# The engine and the backends name no CLI flag in a string: a failure's remedy is an enum
# eb_advice bit, and the harness adds the flag text (src/harness/pipeline/advice.c).
flags=$(git ls-files 'src/engine/*.[ch]' 'src/engine/*.cu' 'src/backends/*.[ch]' 2>/dev/null |
  xargs -r perl -0777 -ne '
    s{/\*.*?\*/}{(my $c = $&) =~ tr/\n//cd; $c}gse;  # comments out, lines kept
    s{//[^\n]*}{}g;
    s{\x27(?:[^\x27\\\n]|\\.)*\x27}{""}g;                 # character literals
    while (/"((?:[^"\\\n]|\\.)*)"/g) {
      my ($lit, $at) = ($1, $-[0]);
      next unless $lit =~ /--[a-z]/;
      my $line = 1 + (substr($_, 0, $at) =~ tr/\n//);
      print "$ARGV:$line: \"$lit\"\n";
    }')
if [ -n "$flags" ]; then
  echo "$flags"
  echo "engine/backend strings name CLI flags (above); record an enum eb_advice bit instead"
  status=1
fi
# The harness's layers include only downward (scripts/check_layers.sh).
bash scripts/check_layers.sh >/dev/null || { bash scripts/check_layers.sh; status=1; }
[ "$status" -eq 0 ] && echo "style: ok"
exit "$status"
