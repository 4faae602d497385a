#!/usr/bin/env bash
# Builds tensorlife for another platform from this x86-64 Debian machine and runs its tests there
# under an emulator:
#   scripts/cross.sh windows   Windows x64: mingw-w64, OpenBLAS/cJSON/Highway built from Debian's
#                              source packages (cached), the suites under wine
#   scripts/cross.sh arm64     Linux arm64: Debian's cross compilers and arm64 libraries
#                              (multiarch), the suites and golden files under qemu-user
# Installs what is missing (apt), builds in build-<platform>/ and installs into
# build-<platform>/stage/.  The target's libraries for Windows are cached in
# ${TL_CROSS_CACHE:-~/.cache/tensorlife-cross}, outside the clone: a second run rebuilds nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
platform=${1:-}
jobs=$(nproc)
cache=${TL_CROSS_CACHE:-$HOME/.cache/tensorlife-cross}
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  echo "cross: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The same Criterion-API suites everywhere; summed up from each runner's synthesis line.
run_suites() {  # runner-prefix... -- suite programs
  local total=0 passed=0 failed=0 skipped=0 line
  local prefix=()
  while [ "$1" != "--" ]; do prefix+=("$1"); shift; done
  shift
  [ $# -gt 0 ] || { echo "cross $platform: no suites found in the build"; exit 1; }
  for program in "$@"; do
    echo "== $(basename "$program")"
    set +e
    "${prefix[@]}" "$program" --jobs 1 > "$program.log" 2>&1
    local status=$?
    set -e
    grep -E '^\[(FAIL|CRASH|SKIP)|^\[----\]|^\[ERR' "$program.log" || true
    line=$(grep -a 'Synthesis' "$program.log" | tail -1)
    echo "   ${line:-no synthesis line: the program did not finish (status $status)}"
    if [ -z "$line" ]; then failed=$((failed + 1)); continue; fi
    local t p f s
    t=$(sed -n 's/.*Tested: \([0-9]*\).*/\1/p' <<< "$line")
    p=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<< "$line")
    f=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<< "$line")
    s=$(sed -n 's/.*Skipped: \([0-9]*\).*/\1/p' <<< "$line")
    total=$((total + t)); passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + ${s:-0}))
  done
  echo "cross $platform suites: $passed passed, $failed failed, $skipped skipped (of $((total + skipped)) cases)"
  [ "$failed" -eq 0 ]
}

# The suites a build has: its conformance.* tests (tests/CMakeLists.txt's one list).
suites_of() {  # build folder -> test program paths, without the target's suffix
  ctest --test-dir "$1" -N -R '^conformance[.]' | sed -n "s|.*conformance[.]\([a-z_0-9]*\)\$|$1/tests/test_\1|p"
}

case "$platform" in
arm64)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${sudo_cmd[@]}" dpkg --add-architecture arm64
  fi
  # Not libcriterion-dev:arm64: it cannot be installed beside the amd64 one (and its runner
  # hangs under qemu-user); tests/compat runs the suites.
  apt_install crossbuild-essential-arm64 qemu-user pkg-config \
    libopenblas-dev:arm64 libcjson-dev:arm64 libhwy-dev:arm64 libpcre2-dev:arm64
  build="$root/build-arm64"
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX="$build/stage" -DTL_BUILD_CSHARP_NATIVE=ON \
    -DTL_BUILD_JAVA_NATIVE=ON > "$build/cross-configure.log" \
    || { cat "$build/cross-configure.log"; exit 1; }
  cmake --build "$build" -j"$jobs" > "$build/cross-build.log" 2>&1 || { tail -40 "$build/cross-build.log"; exit 1; }
  cmake --install "$build" > /dev/null
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu TLC_LAUNCHER=qemu-aarch64
  # Some hosts' qemu-user never returns from a guest's pthread_create (seen on this project's
  # machines: kernel 6.18, qemu 7.2).  A 5-line probe decides; where it hangs, BLAS stays on
  # the calling thread and cases that need a second thread are skipped and counted.
  printf '#include <pthread.h>\nstatic void *f(void *p) { return p; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); return pthread_join(t, 0); }\n' \
    > "$build/thread_probe.c"
  aarch64-linux-gnu-gcc "$build/thread_probe.c" -o "$build/thread_probe" -pthread
  if ! (timeout -s KILL 20 qemu-aarch64 "$build/thread_probe") 2> /dev/null; then
    export TL_TEST_NO_THREADS="qemu-user on this host never starts a thread (scripts/cross.sh's probe)"
    export OPENBLAS_NUM_THREADS=1
    echo "cross arm64: $TL_TEST_NO_THREADS"
  fi
  # The C# package's runtimes/linux-arm64/native (no .NET under qemu-user here: a loader does what
  # the runtime would, dlopen beside the other library, and calls in).
  aarch64-linux-gnu-gcc -I"$root/include" "$root/tests/packaging/load_native.c" -o "$build/load_native" -ldl
  qemu-aarch64 "$build/load_native" "$build/bindings/csharp/natives/libtensorlife_csharp.so"
  qemu-aarch64 "$build/load_native" "$build/bindings/java/natives/linux-aarch64/libtensorlife_jni.so" \
    Java_org_tensorlife_raw_tensorlifeJNI_tlb_1abi_1version
  # The Python wheel for linux aarch64, built against Debian's arm64 Python headers (multiarch),
  # installed by pip for that platform and imported by Debian's arm64 Python under qemu-user.
  py=$(/usr/bin/python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  apt_install "libpython$py-dev:arm64" python3-pip python3-build
  rm -rf "$build/wheel" && mkdir -p "$build/wheel/python"
  (cd "$build/wheel" && apt-get download -qq "python$py-minimal:arm64" > /dev/null 2>&1 &&
    dpkg-deb -x python"$py"-minimal_*_arm64.deb python)
  (cd "$root/bindings/python" && TL_CMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
    _PYTHON_HOST_PLATFORM=linux-aarch64 _PYTHON_SYSCONFIGDATA_NAME=_sysconfigdata__aarch64-linux-gnu \
    CC=aarch64-linux-gnu-gcc LDSHARED="aarch64-linux-gnu-gcc -shared" \
    /usr/bin/python3 -m build --wheel --no-isolation --outdir "$build/wheel/dist" . > "$build/wheel/build.log" 2>&1;
    status=$?; rm -rf build ./*.egg-info; exit $status) || { tail -30 "$build/wheel/build.log"; exit 1; }
  /usr/bin/python3 -m pip install -q --no-deps --target "$build/wheel/site" --platform linux_aarch64 \
    --only-binary=:all: "$build"/wheel/dist/tensorlife-*-linux_aarch64.whl 2> /dev/null
  echo "cross arm64: $(basename "$build"/wheel/dist/*.whl)"
  (cd "$build/wheel" && QEMU_LD_PREFIX=/ PYTHONPATH="$build/wheel/site" \
    qemu-aarch64 "python/usr/bin/python$py" "$root/tests/packaging/wheel_smoke.py")
  # qemu's default CPU has SVE2, so Highway runs its SVE kernels; a Cortex-A72 has NEON alone.
  # Both run the whole suite; the demo's machine line shows the kernels each one chose.
  mapfile -t programs < <(suites_of "$build")
  for cpu in max cortex-a72; do
    echo "== arm64 under qemu -cpu $cpu: $(QEMU_CPU=$cpu qemu-aarch64 "$build/examples/decode" --tokens 2 --threads 1 | grep '^machine')"
    QEMU_CPU=$cpu run_suites qemu-aarch64 -- "${programs[@]}"
  done
  ;;
windows)
  # deb-src added, once, for apt-get source.
  ensure_deb_src() {
    if ! apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null | grep -q Sources; then
      for f in /etc/apt/sources.list.d/debian.sources; do
        [ -f "$f" ] && "${sudo_cmd[@]}" sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"
      done
      [ -f /etc/apt/sources.list ] && "${sudo_cmd[@]}" sed -i 's/^deb \(.*\)$/deb \1\ndeb-src \1/' /etc/apt/sources.list
      "${sudo_cmd[@]}" apt-get update -qq
    fi
  }
  apt_install g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix wine wine64 dpkg-dev make cmake pkg-config
  # The target's OpenBLAS, cJSON and Highway, from the source packages of the versions this
  # machine's Debian ships (deb-src added for apt-get source), built once into the cache.
  # This machine's own architecture only: once the arm64 stage has installed the :arm64 packages,
  # a bare name lists both, and the key (and so the cache) would change.
  host_arch=$(dpkg --print-architecture)
  versions=$(dpkg-query -W -f='${source:Version} ' libopenblas-dev:"$host_arch" libcjson-dev:"$host_arch" \
    libhwy-dev:"$host_arch" | tr -c 'A-Za-z0-9.+\n-' _)
  prefix="$cache/windows-x64-$(sha256sum <<< "$versions" | cut -c1-12)"
  if [ ! -f "$prefix/.complete" ]; then
    echo "cross windows: building OpenBLAS, cJSON and Highway for Windows into $prefix"
    ensure_deb_src
    src="$cache/src"
    rm -rf "$src" "$prefix"
    mkdir -p "$src" "$prefix"
    (cd "$src" && apt-get source -qq openblas cjson highway > /dev/null 2>&1)
    toolchain="$root/cmake/toolchains/x86_64-w64-mingw32.cmake"
    # cJSON static, its symbols never dllexport'ed (they would leave tensorlife.dll); the .pc says so.
    cmake -S "$src"/cjson-*/ -B "$src/build-cjson" -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF -DENABLE_CJSON_TEST=OFF -DENABLE_CJSON_UTILS=OFF \
      -DENABLE_CUSTOM_COMPILER_FLAGS=OFF -DCMAKE_C_FLAGS=-DCJSON_HIDE_SYMBOLS > "$src/cjson.log"
    cmake --build "$src/build-cjson" -j"$jobs" >> "$src/cjson.log" && cmake --install "$src/build-cjson" >> "$src/cjson.log"
    sed -i 's|^Cflags: \(.*\)$|Cflags: \1 -DCJSON_HIDE_SYMBOLS|' "$prefix/lib/pkgconfig/libcjson.pc"
    cmake -S "$src"/highway-*/ -B "$src/build-hwy" -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF -DHWY_ENABLE_TESTS=OFF \
      -DHWY_ENABLE_EXAMPLES=OFF -DHWY_ENABLE_CONTRIB=OFF > "$src/hwy.log"
    cmake --build "$src/build-hwy" -j"$jobs" >> "$src/hwy.log" && cmake --install "$src/build-hwy" >> "$src/hwy.log"
    # OpenBLAS: its kernels for every x86-64 family chosen at run time (as Debian's own build),
    # s and d only; single-threaded, since the caller's executor carries the parallel work (and
    # 0.3.21's Windows thread server does not build without the complex kernels).  Debian's
    # mingw gcc says "12-posix" to -dumpversion, which OpenBLAS's makefiles compare as a number
    # (and then build no AVX2 kernel): a wrapper answers with the real version.
    mkdir -p "$src/bin"
    gcc_version=$(x86_64-w64-mingw32-gcc-posix -E -dM -x c /dev/null |
      awk '/__GNUC__ /{a=$3} /__GNUC_MINOR__ /{b=$3} /__GNUC_PATCHLEVEL__ /{c=$3} END {print a"."b"."c}')
    printf '#!/bin/sh\ncase "$1" in -dumpversion|-dumpfullversion) echo %s; exit 0;; esac\nexec x86_64-w64-mingw32-gcc-posix "$@"\n' \
      "$gcc_version" > "$src/bin/x86_64-w64-mingw32-gcc"
    chmod +x "$src/bin/x86_64-w64-mingw32-gcc"
    blas_flags=(CC=x86_64-w64-mingw32-gcc HOSTCC=gcc NOFORTRAN=1 NO_LAPACK=1 NO_LAPACKE=1 C_LAPACK=0 BINARY=64
      DYNAMIC_ARCH=1 "DYNAMIC_LIST=SANDYBRIDGE HASWELL SKYLAKEX" TARGET=PRESCOTT USE_THREAD=0
      BUILD_SINGLE=1 BUILD_DOUBLE=1 NO_SHARED=1 PREFIX="$prefix")
    (cd "$src"/openblas-*/ && PATH="$src/bin:$PATH" make -j"$jobs" "${blas_flags[@]}" libs > "$src/openblas.log" 2>&1 &&
      touch lib.grd && PATH="$src/bin:$PATH" make "${blas_flags[@]}" install >> "$src/openblas.log" 2>&1) ||
      { tail -30 "$src/openblas.log"; exit 1; }
    touch "$prefix/.complete"
  fi
  if [ ! -f "$prefix/.pcre2-complete" ]; then
    # PCRE2 (the tokenizers' Unicode classes), static, from the same source packages; beside the
    # others in the cache but outside its key, so adding it rebuilt nothing else.
    ensure_deb_src
    rm -rf "$cache"/src/pcre2*
    for v in $(apt-cache showsrc pcre2 | sed -n 's/^Version: //p'); do  # not every version listed is served
      (cd "$cache/src" && apt-get source -qq "pcre2=$v" > /dev/null 2>&1) && break
    done
    cmake -S "$(ls -d "$cache"/src/pcre2-*/ | head -1)" -B "$cache/src/build-pcre2" \
      -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/x86_64-w64-mingw32.cmake" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF -DPCRE2_SUPPORT_JIT=ON -DPCRE2_BUILD_PCRE2GREP=OFF \
      -DPCRE2_BUILD_TESTS=OFF -DPCRE2_SUPPORT_LIBBZ2=OFF -DPCRE2_SUPPORT_LIBZ=OFF > "$cache/src/pcre2.log"
    cmake --build "$cache/src/build-pcre2" -j"$jobs" >> "$cache/src/pcre2.log" &&
      cmake --install "$cache/src/build-pcre2" >> "$cache/src/pcre2.log" || { tail -30 "$cache/src/pcre2.log"; exit 1; }
    sed -i 's|^Cflags: \(.*\)$|Cflags: \1 -DPCRE2_STATIC|' "$prefix/lib/pkgconfig/libpcre2-8.pc"
    touch "$prefix/.pcre2-complete"
  fi
  if [ ! -f "$prefix/jni/jni_md.h" ]; then
    # Windows' jni_md.h for the jar's JNI library: Debian's JDK carries Linux's alone; its
    # OpenJDK source package has Windows' (one file taken from the tarball).
    # (the newest version listed is not always served: each in turn)
    for v in $(apt-cache showsrc openjdk-17 | sed -n 's/^Version: //p'); do
      (cd "$cache/src" && apt-get source --download-only -qq "openjdk-17=$v" > /dev/null 2>&1) && break
    done
    mkdir -p "$prefix/jni"
    tar -xJf "$(ls "$cache"/src/openjdk-17_*.orig.tar.xz | head -1)" -C "$prefix/jni" --wildcards --strip-components=6 \
      '*/src/java.base/windows/native/include/jni_md.h'
  fi
  export TL_CROSS_PREFIX="$prefix"
  build="$root/build-windows"
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/x86_64-w64-mingw32.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX="$build/stage" -DTL_BUILD_BENCH=OFF -DTL_BUILD_CSHARP_NATIVE=ON \
    -DTL_BUILD_JAVA_NATIVE=ON -DTL_JNI_MD_INCLUDE="$prefix/jni" \
    > "$build/cross-configure.log" || { cat "$build/cross-configure.log"; exit 1; }
  cmake --build "$build" -j"$jobs" > "$build/cross-build.log" 2>&1 || { grep -B2 -A8 -m5 'error' "$build/cross-build.log"; exit 1; }
  cmake --install "$build" > /dev/null
  bash "$root/tests/packaging/check_dll_exports.sh" "$build/tensorlife.dll" "$root/include/tensorlife"
  # tensorlife.dll lies in the build folder, not beside each program: on wine's PATH (Z: is /).
  export WINEDEBUG=-all WINEPREFIX="$cache/wine" WINEPATH="Z:$(tr / '\\' <<< "$build")"
  wineboot --init > /dev/null 2>&1 || true
  # The C# package's runtimes/win-x64/native, loaded as the .NET runtime would (no .NET in wine here).
  x86_64-w64-mingw32-gcc-posix -I"$root/include" "$root/tests/packaging/load_native.c" -o "$build/load_native.exe" -static
  wine "$build/load_native.exe" "$(tr / '\\' <<< "Z:$build/bindings/csharp/natives/tensorlife_csharp.dll")"
  wine "$build/load_native.exe" "$(tr / '\\' <<< "Z:$build/bindings/java/natives/windows-x86_64/tensorlife_jni.dll")" \
    Java_org_tensorlife_raw_tensorlifeJNI_tlb_1abi_1version
  # Mono's internal calls: the C# natives find Mono's embedding API among the loaded modules (a
  # stand-in DLL here for Unity's mono-2.0-bdwgc.dll: no Mono for Windows is at hand), and without it nothing.
  x86_64-w64-mingw32-gcc-posix -shared "$root/tests/packaging/fake_mono.c" -o "$build/fake_mono.dll"
  x86_64-w64-mingw32-gcc-posix -I"$root/include" "$root/tests/packaging/mono_registration.c" -o "$build/mono_registration.exe" -static
  for with in "" "$(tr / '\\' <<< "Z:$build/fake_mono.dll")"; do
    wine "$build/mono_registration.exe" "$(tr / '\\' <<< "Z:$build/bindings/csharp/natives/tensorlife_csharp.dll")" \
      ${with:+"$with"} | grep -E "^FAIL|passed"
  done
  for dll in "$build"/bindings/csharp/natives/*.dll "$build"/bindings/java/natives/*/*.dll; do
    x86_64-w64-mingw32-objdump -p "$dll" | grep -q 'DLL Name: lib' &&
      { echo "$(basename "$dll") needs a DLL that Windows does not have:"; x86_64-w64-mingw32-objdump -p "$dll" | grep 'DLL Name'; exit 1; }
  done
  echo "== windows under wine: $(wine "$build/examples/decode.exe" --tokens 2 --threads 1 | grep '^machine')"
  mapfile -t programs < <(suites_of "$build")
  run_suites wine -- "${programs[@]/%/.exe}"
  ;;
*)
  echo "usage: scripts/cross.sh windows|arm64" >&2
  exit 2
  ;;
esac
