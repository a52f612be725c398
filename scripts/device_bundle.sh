#!/usr/bin/env bash
# Builds, on this machine, what a GPU machine without FFmpeg needs to run edgebench's CUDA tests
# and GPU benchmarks (the CUDA toolkit and cuDNN must be here; the GPU need not be), into one
# folder to carry, build-dev/:
#
#   build-dev/edgebench              this tree: CUDA on, FFmpeg and PostgreSQL off (built in
#                                    build-gpu/)
#   build-dev/test_cuda_kernels,     with --tests: the CUDA kernel and engine tests, from the
#   build-dev/test_cuda_engine       normal build (build/, `make build`; they link no FFmpeg)
#   build-dev/edgebench-base         with --base REV: REV built the same way, for before/after
#                                    runs side by side (a git worktree in build-gpu-base/tree)
#   build-dev/lib/                   the shared libraries edgebench links that such a machine
#                                    may lack (libpng, libjpeg, SQLite, zlib)
#
# The binaries are stripped of debug information (symbols kept) so that the folder fits a
# device call's carry (64 MiB). On the device: `export LD_LIBRARY_PATH=$PWD/build-dev/lib`,
# then e.g. `bench/gpu_llm_ab.sh`. Usage: scripts/device_bundle.sh [--tests] [--base REV] [-j N]
set -euo pipefail

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }

root=$(cd "$(dirname "$0")/.." && pwd)
tests=0
base=""
jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) tests=1 ;;
    --base) [ $# -ge 2 ] || { echo "device_bundle: --base needs a revision" >&2; exit 2; }
      base=$2; shift ;;
    -j) [ $# -ge 2 ] || { echo "device_bundle: -j needs a number" >&2; exit 2; }
      jobs=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "device_bundle: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# build SRC DIR: configures and builds edgebench from SRC into DIR.
build() {
  local src=$1 dir=$2
  cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEB_CUDA=ON -DEB_FFMPEG=OFF \
    -DEB_POSTGRES=OFF -DEB_BUILD_TESTS=OFF -DEB_BUILD_BENCH=OFF >"$dir.configure.log" 2>&1 ||
    { echo "device_bundle: configuring $dir failed (the CUDA toolkit and cuDNN 9 are needed): see $dir.configure.log" >&2; exit 1; }
  cmake --build "$dir" -j "$jobs" --target edgebench >"$dir.build.log" 2>&1 ||
    { echo "device_bundle: building $dir failed: see $dir.build.log" >&2; exit 1; }
}

cd "$root"
rm -rf build-dev
mkdir -p build-gpu build-dev/lib
build "$root" build-gpu
strip --strip-debug -o build-dev/edgebench build-gpu/src/edgebench
if [ "$tests" = 1 ]; then
  [ -f build/CMakeCache.txt ] ||
    { echo "device_bundle: --tests: no normal build in build/ (run make build)" >&2; exit 1; }
  cmake --build build -j "$jobs" --target test_cuda_kernels test_cuda_engine >build-dev-tests.build.log 2>&1 ||
    { echo "device_bundle: building the CUDA tests in build/ failed: see build-dev-tests.build.log" >&2; exit 1; }
  for t in test_cuda_kernels test_cuda_engine; do
    strip --strip-debug -o "build-dev/$t" "build/tests/$t"
  done
fi
for lib in libpng16.so.16 libjpeg.so.62 libsqlite3.so.0 libz.so.1; do
  path=$(ldd build-gpu/src/edgebench | awk -v l="$lib" '$1 == l { print $3 }')
  [ -n "$path" ] && cp -L "$path" build-dev/lib/
done

if [ -n "$base" ]; then
  rev=$(git rev-parse --verify "$base^{commit}") ||
    { echo "device_bundle: $base is not a revision of this repository" >&2; exit 2; }
  mkdir -p build-gpu-base
  if [ -d build-gpu-base/tree ]; then
    git -C build-gpu-base/tree checkout -q --detach "$rev"
  else
    git worktree add -q --detach build-gpu-base/tree "$rev"
  fi
  # The fetched dependencies (ONNX Runtime's headers) are the same for both trees.
  [ -e build-gpu-base/tree/.deps ] || ln -s "$root/.deps" build-gpu-base/tree/.deps
  build "$root/build-gpu-base/tree" build-gpu-base/build
  strip --strip-debug -o build-dev/edgebench-base build-gpu-base/build/src/edgebench
fi

du -sh build-dev
echo "carry: [\"build-dev\"]; on the device: export LD_LIBRARY_PATH=\$PWD/build-dev/lib"
