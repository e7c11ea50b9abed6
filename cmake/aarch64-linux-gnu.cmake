# SPDX-License-Identifier: MIT
# Cross-building memscribe for 64-bit Arm Linux (scripts/cross-check.sh):
# clang and lld with an arm64 Debian 12 root as the sysroot (its -dev
# packages are the libraries memscribe links, its gcc the start files and
# libgcc). Not Debian's gcc-aarch64-linux-gnu: it conflicts with
# gcc-multilib, which the i386 collector needs. The root is
# MEMSCRIBE_SYSROOT, from the environment or -D.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(NOT MEMSCRIBE_SYSROOT)
  set(MEMSCRIBE_SYSROOT $ENV{MEMSCRIBE_SYSROOT})
endif()
if(NOT MEMSCRIBE_SYSROOT)
  message(FATAL_ERROR "cross-building for aarch64 needs MEMSCRIBE_SYSROOT (an arm64 Debian 12 root)")
endif()
# Kept for reconfiguring and for try_compile's own projects.
set(MEMSCRIBE_SYSROOT ${MEMSCRIBE_SYSROOT} CACHE PATH "the arm64 Debian 12 root cross-builds use")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MEMSCRIBE_SYSROOT)
set(CMAKE_SYSROOT ${MEMSCRIBE_SYSROOT})
set(CMAKE_C_COMPILER clang)
set(CMAKE_CXX_COMPILER clang++)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_MODULE_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config reads the root's .pc files and prefixes their paths with it.
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${MEMSCRIBE_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
    "${MEMSCRIBE_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${MEMSCRIBE_SYSROOT}/usr/share/pkgconfig")
