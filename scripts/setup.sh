#!/usr/bin/env bash
# edgebench setup: installs the Debian packages that edgebench needs and fetches ONNX Runtime
# (headers + shared libraries) into <repo>/.deps/onnxruntime/.
#
#   scripts/setup.sh [--for demo|test] [--quiet]
#
#   --for demo  (`make setup`, `make demo`) what the build and a run need: build tools, the
#               libraries edgebench links (FFmpeg, libpng, libjpeg, SQLite, libpq), npm and ONNX
#               Runtime.
#   --for test  (the default; `make test`, hence CI) all of demo plus what only the tests use:
#               ONNX's node test data, headless Chromium, clang with the libFuzzer runtime, the
#               PostgreSQL server, promtool and curl, the ffmpeg command and, on x86-64, the
#               aarch64 cross compiler and qemu.
#
# Idempotent: a second run checks what is present and does nothing else. Works as root on a
# fresh Debian 12 machine; as another user it uses sudo for apt-get only.
#
# Environment:
#   EB_EXTRA_PACKAGES  more Debian packages to install (space separated)
#   EB_CACHE_DIR       where downloaded tarballs are kept (default ${XDG_CACHE_HOME:-~/.cache}/edgebench)
set -euo pipefail

# Debian packages the build and the demo need. Extend here (or through EB_EXTRA_PACKAGES).
EB_DEMO_PACKAGES="build-essential cmake pkg-config ca-certificates
libavformat-dev libavcodec-dev libavdevice-dev libavutil-dev libswscale-dev
libpng-dev libjpeg62-turbo-dev libsqlite3-dev
libpq-dev"
# What only the tests use, on top of the above:
# libonnx-testdata: tests/conformance (ONNX's own node tests; skipped without it).
# clang + libclang-rt-14-dev: the libFuzzer targets (-DEB_FUZZ=ON); clang-14 only recommends the
# runtime, and the install below skips recommendations.
# chromium: tests/e2e/test_html.sh opens report.html in headless Chromium (skipped without it).
# ffmpeg: tests/e2e/test_network.sh streams a test pattern over RTP/UDP (skipped without it).
# gcc-aarch64-linux-gnu + libc6-dev-arm64-cross + qemu-user: scripts/test.sh cross-compiles the
# kernel tests for aarch64 and runs the NEON kernels under qemu (x86-64 hosts only; the C library
# is only a recommendation of the compiler, hence listed).
# postgresql: tests/e2e/test_history_pg.sh starts its own server (initdb, pg_ctl; skipped without).
# prometheus + curl: tests/e2e/test_prometheus.sh scrapes --prometheus with curl and checks the
# page with promtool (skipped without them).
EB_TEST_PACKAGES="libonnx-testdata clang libclang-rt-14-dev chromium prometheus curl ffmpeg postgresql"
if [ "$(uname -m)" = x86_64 ]; then
    EB_TEST_PACKAGES="$EB_TEST_PACKAGES gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
fi

# ONNX Runtime comes from the npm registry: headers from the Unity package (ONNX Runtime 1.29,
# its C API is what we compile against), libraries from onnxruntime-node (ONNX Runtime 1.30,
# CPU-only, x64 and arm64). Newer libraries serve older API versions, so the pair works.
ORT_HDR_PKG="com.github.asus4.onnxruntime"
ORT_HDR_VER="0.4.9"
ORT_HDR_SHA256="e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d"
ORT_HDR_DIR="package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64_x86_64-simulator/onnxruntime.framework/Headers"
ORT_LIB_PKG="onnxruntime-node"
ORT_LIB_VER="1.30.0"
ORT_LIB_SHA256="6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75"
ORT_LIB_DIR="package/bin/napi-v6/linux"

quiet=0
purpose="test"
while [ $# -gt 0 ]; do
    case "$1" in
    --quiet | -q) quiet=1 ;;
    --for)
        [ $# -ge 2 ] || {
            echo "edgebench setup: --for needs a value: demo or test" >&2
            exit 2
        }
        purpose="$2"
        shift
        ;;
    --for=*) purpose="${1#--for=}" ;;
    -h | --help)
        # the header: the comment lines after the first line
        awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *)
        echo "edgebench setup: unknown option '$1'; use --for demo|test, --quiet or --help" >&2
        exit 2
        ;;
    esac
    shift
done
case "$purpose" in
demo) EB_PACKAGES="$EB_DEMO_PACKAGES" ;;
test) EB_PACKAGES="$EB_DEMO_PACKAGES $EB_TEST_PACKAGES" ;;
*)
    echo "edgebench setup: --for must be demo or test, not '$purpose'" >&2
    exit 2
    ;;
esac

say() { [ "$quiet" -eq 1 ] || echo "edgebench setup: $*"; }
die() {
    echo "edgebench setup: $*" >&2
    exit 1
}

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_dir="${EB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgebench}/npm"
ort_dir="$repo/.deps/onnxruntime"
stamp="$ort_dir/.stamp"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "failed to install packages: not root and sudo is missing; run '$*' as root"
    fi
}

# --- Debian packages -------------------------------------------------------------------------
install_packages() {
    command -v dpkg-query >/dev/null 2>&1 || {
        say "not a Debian system (no dpkg-query); install these yourself: $EB_PACKAGES"
        return 0
    }
    local wanted missing="" p
    wanted="$EB_PACKAGES ${EB_EXTRA_PACKAGES:-}"
    # npm fetches ONNX Runtime; Debian's nodejs/npm only when no npm is installed at all.
    command -v npm >/dev/null 2>&1 || wanted="$wanted nodejs npm"
    for p in $wanted; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing="$missing $p"
        fi
    done
    [ -n "$missing" ] || return 0
    say "installing Debian packages:$missing"
    as_root apt-get update -qq || die "failed to run apt-get update; check the network and /etc/apt/sources.list"
    # shellcheck disable=SC2086 # word splitting of the package list is intended
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
        >/dev/null || die "failed to install Debian packages:$missing; see the apt-get output above"
}

# --- ONNX Runtime ----------------------------------------------------------------------------
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# fetch_tarball PKG VER SHA256 -> prints the path of the verified tarball in the cache.
fetch_tarball() {
    local pkg="$1" ver="$2" want="$3" tgz got tmp
    tgz="$cache_dir/$pkg-$ver.tgz"
    if [ ! -f "$tgz" ]; then
        command -v npm >/dev/null 2>&1 || die "failed to fetch $pkg@$ver: npm is missing; install nodejs and npm"
        mkdir -p "$cache_dir"
        tmp="$(mktemp -d "$cache_dir/.fetch.XXXXXX")"
        say "fetching $pkg@$ver from the npm registry (once; cached in $cache_dir)" >&2
        # npm's own cache goes into the temporary folder so the ~100 MB tarballs are not kept
        # twice. npm prints the tarball name on stdout and config warnings (e.g. 'Unknown user
        # config "nodedir"') on stderr: both are kept out of sight unless the fetch fails.
        if ! (cd "$tmp" && npm pack "$pkg@$ver" --pack-destination "$tmp" --cache "$tmp/npm-cache" \
            --loglevel=error --no-fund --no-audit >"$tmp/npm.out" 2>"$tmp/npm.err"); then
            grep -v 'Unknown user config' "$tmp/npm.err" >&2 || true
            rm -rf "$tmp"
            die "failed to fetch $pkg@$ver with npm pack; check the network or the npm registry settings"
        fi
        [ -f "$tmp/$pkg-$ver.tgz" ] || {
            rm -rf "$tmp"
            die "failed to fetch $pkg@$ver: npm pack produced no $pkg-$ver.tgz"
        }
        mv "$tmp/$pkg-$ver.tgz" "$tgz"
        rm -rf "$tmp"
    fi
    got="$(sha256_of "$tgz")"
    if [ "$got" != "$want" ]; then
        rm -f "$tgz"
        die "failed to verify $tgz: sha256 is $got, expected $want; deleted it, run this script again to fetch it anew"
    fi
    echo "$tgz"
}

ort_ready() {
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ORT_HDR_SHA256 $ORT_LIB_SHA256" ] &&
        [ -f "$ort_dir/include/onnxruntime_c_api.h" ] &&
        [ -f "$ort_dir/lib/linux-x64/libonnxruntime.so.1" ] &&
        [ -f "$ort_dir/lib/linux-arm64/libonnxruntime.so.1" ]
}

install_ort() {
    ort_ready && return 0
    local hdr_tgz lib_tgz stage
    hdr_tgz="$(fetch_tarball "$ORT_HDR_PKG" "$ORT_HDR_VER" "$ORT_HDR_SHA256")"
    lib_tgz="$(fetch_tarball "$ORT_LIB_PKG" "$ORT_LIB_VER" "$ORT_LIB_SHA256")"
    mkdir -p "$repo/.deps"
    stage="$(mktemp -d "$repo/.deps/.onnxruntime.XXXXXX")"
    # Unpack only what the build and the run need, into a staging folder, then swap it in so
    # that an interrupted run never leaves a half-filled .deps/onnxruntime behind.
    tar -xzf "$hdr_tgz" --no-same-owner -C "$stage" --wildcards "$ORT_HDR_DIR/*.h" ||
        die "failed to unpack the ONNX Runtime headers from $hdr_tgz; delete it and run again"
    tar -xzf "$lib_tgz" --no-same-owner -C "$stage" "$ORT_LIB_DIR/x64/libonnxruntime.so.1" \
        "$ORT_LIB_DIR/arm64/libonnxruntime.so.1" ||
        die "failed to unpack the ONNX Runtime libraries from $lib_tgz; delete it and run again"
    mkdir -p "$stage/out/include" "$stage/out/lib/linux-x64" "$stage/out/lib/linux-arm64"
    mv "$stage/$ORT_HDR_DIR"/*.h "$stage/out/include/"
    mv "$stage/$ORT_LIB_DIR/x64/libonnxruntime.so.1" "$stage/out/lib/linux-x64/"
    mv "$stage/$ORT_LIB_DIR/arm64/libonnxruntime.so.1" "$stage/out/lib/linux-arm64/"
    echo "$ORT_HDR_SHA256 $ORT_LIB_SHA256" >"$stage/out/.stamp"
    rm -rf "$ort_dir"
    mv "$stage/out" "$ort_dir"
    rm -rf "$stage"
    say "ONNX Runtime $ORT_LIB_VER installed in $ort_dir"
}

install_packages
install_ort
say "ok"
