#!/usr/bin/env bash
# The harness's layers (docs/architecture.md): a file in src/harness/<layer>/ includes only its
# own layer's headers and those of the layers below it, so that data flows one way:
#
#   metrics  <-  results  <-  pipeline, report  <-  cmd
#
# (pipeline and report are peers: neither includes the other). Prints each upward include as
# FILE:LINE: layer A includes layer B; exit 1 when there is one.
set -u
cd "$(dirname "$0")/.." || exit 2
allowed() { # LAYER -> the layers it may include
  case "$1" in
  metrics) echo "metrics" ;;
  results) echo "metrics results" ;;
  pipeline) echo "metrics results pipeline" ;;
  report) echo "metrics results report" ;;
  cmd) echo "metrics results pipeline report cmd" ;;
  *) echo "" ;;
  esac
}
bad=0
for f in src/harness/*/*.[ch] src/harness/*/*.def; do
  [ -f "$f" ] || continue
  layer=$(basename "$(dirname "$f")")
  ok=$(allowed "$layer")
  if [ -z "$ok" ]; then
    echo "$f: not in a known layer (metrics, results, pipeline, report, cmd)"
    bad=1
    continue
  fi
  while IFS=: read -r line inc; do
    dep=$(printf '%s' "$inc" | sed -n 's|.*"harness/\([a-z_]*\)/.*|\1|p')
    [ -n "$dep" ] || continue
    case " $ok " in
    *" $dep "*) ;;
    *)
      echo "$f:$line: layer $layer includes layer $dep"
      bad=1
      ;;
    esac
  done < <(grep -n '#include "harness/' "$f")
done
if [ -n "$(ls src/harness/*.[ch] 2>/dev/null)" ]; then
  echo "src/harness/ holds files outside a layer: $(ls src/harness/*.[ch] | tr '\n' ' ')"
  bad=1
fi
[ "$bad" -eq 0 ] && echo "layers: ok"
exit "$bad"
