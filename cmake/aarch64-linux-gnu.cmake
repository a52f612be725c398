# Cross build for aarch64 (the Jetson's ARM cores) on a Debian x86-64 host, used by
# scripts/test.sh to run the NEON kernel tests:
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DEB_KERNEL_TESTS_ONLY=ON && cmake --build build-aarch64 && (cd build-aarch64 && ctest)
#
# Needs the Debian packages gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user
# (scripts/setup.sh installs them on x86-64 hosts). ctest runs every test executable through
# qemu user-mode emulation, with the cross C library as its sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(EB_AARCH64_SYSROOT /usr/aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${EB_AARCH64_SYSROOT})

# Libraries and headers from the cross sysroot only; programs (pkg-config, ...) from the host.
set(CMAKE_FIND_ROOT_PATH ${EB_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
