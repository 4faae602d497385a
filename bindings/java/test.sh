#!/usr/bin/env bash
# The Java binding: SWIG (JNI) code and its JNI library built into BUILD_DIR/java, the hand
# layer compiled with javac, then the test run twice: from the build tree (the library path
# recorded in BuildConfig) and from an installed prefix (-Dtensorlife.library).  No
# LD_LIBRARY_PATH: the JNI library carries an rpath to libtensorlife.
#   bindings/java/test.sh BUILD_DIR [--bench]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
out="$build/java"
rm -rf "$out" && mkdir -p "$out/gen/org/tensorlife/raw" "$out/classes"
java_home=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
swig -java -package org.tensorlife.raw -I"$root/include" -o "$out/tensorlife_jni.c" -outdir "$out/gen/org/tensorlife/raw" "$root/bindings/tl.i"
build_jni() {  # $1: libdir of libtensorlife, $2: output .so
  cc -O2 -fPIC -shared -I"$root/include" -I"$java_home/include" -I"$java_home/include/linux" "$out/tensorlife_jni.c" \
     -L"$1" -Wl,-rpath,"$1" -ltensorlife -o "$2"
}
build_jni "$build" "$out/libtensorlife_jni.so"
cat > "$out/gen/org/tensorlife/BuildConfig.java" <<JAVA
package org.tensorlife;
/** Written by bindings/java/test.sh: where this build put the JNI library. */
final class BuildConfig { static final String JNI_LIBRARY = "$out/libtensorlife_jni.so"; }
JAVA
javac -Xlint:all,-serial -Werror -d "$out/classes" $(find "$out/gen" "$here/src" -name '*.java') "$here/test/TensorLifeTest.java" 2>&1 | grep -v "^Note:" || true
[ -f "$out/classes/TensorLifeTest.class" ] || { echo "javac failed"; exit 1; }
(cd "$out/classes" && jar cf "$out/tensorlife.jar" org)
unset LD_LIBRARY_PATH
if [ "${2:-}" = "--bench" ]; then java -cp "$out/tensorlife.jar:$out/classes" TensorLifeTest --bench; exit 0; fi
echo "java: from the build tree"
java -cp "$out/tensorlife.jar:$out/classes" TensorLifeTest
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib* | head -n1)
build_jni "$libdir" "$libdir/libtensorlife_jni.so"
echo "java: from an installed prefix"
java -Dtensorlife.library="$libdir/libtensorlife_jni.so" -cp "$out/tensorlife.jar:$out/classes" TensorLifeTest
