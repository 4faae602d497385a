# Linux arm64 from an x86-64 Debian machine: its cross compilers and its arm64 multiarch
# libraries (scripts/cross.sh arm64 installs both); programs and tests run under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
# Programs and tests run under qemu-user; a program that starts another (tests/compat's runner)
# starts it through qemu too.
set(CMAKE_CROSSCOMPILING_EMULATOR env;QEMU_LD_PREFIX=/usr/aarch64-linux-gnu;TLC_LAUNCHER=qemu-aarch64;qemu-aarch64)
