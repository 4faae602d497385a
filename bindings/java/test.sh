#!/usr/bin/env bash
# The Java binding, built by CMake (-DTL_BUILD_JAVA=ON) into BUILD_DIR/bindings/java:
#   1. the test suite against the build's tensorlife.jar,
#   2. a consumer outside the tree (tests/consumers/java) with only the installed
#      share/java/tensorlife.jar: `javac -cp tensorlife.jar` and `java -cp tensorlife.jar:.`, no -D
#      flag, no LD_LIBRARY_PATH, after the prefix is deleted (the JNI library is in the jar).
#   bindings/java/test.sh BUILD_DIR [--bench]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
jar="$build/bindings/java/tensorlife.jar"
[ -f "$jar" ] || { echo "java: $jar is missing: configure with -DTL_BUILD_JAVA=ON"; exit 1; }
unset LD_LIBRARY_PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -Xlint:all -Werror -d "$work/tests" -cp "$jar" "$here/test/TensorLifeTest.java" \
  "$here/test/org/tensorlife/BenchBaseline.java"
if [ "${2:-}" = "--bench" ]; then java -cp "$jar:$work/tests" TensorLifeTest --bench; exit 0; fi
echo "java: the suite against the build's tensorlife.jar"
cp "$root/tests/golden/metadata.gguf" "$work/"  # the GGUF fixture (make_golden.py)
"$build/tests/write_tiny_llama" "$work/tiny.gguf"  # the C tests' tiny model, and the C API's tokens on it
expected=$("$build/tests/runner" "$work/tiny.gguf" --prompt "abc ab" --tokens 12 --temperature 0.9 --seed 5 |
  sed -n 's/^tokens: //p')
(cd "$work" && java -cp "$jar:$work/tests" TensorLifeTest)

echo "java: javadoc of the public API (doclint errors fail)"
cmake --build "$build" --target tensorlife_javadoc >/dev/null
test -f "$build/bindings/java/javadoc/org.tensorlife/org/tensorlife/Context.html" || { echo "java: no javadoc for Context"; exit 1; }

echo "java: a consumer with only the installed jar"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
mkdir "$work/app"
cp "$work/prefix/share/java/tensorlife.jar" "$root/tests/consumers/java/Consumer.java" "$work/app/"
ls "$work/prefix/share/java/"tensorlife-*.pom >/dev/null
rm -rf "$work/prefix"
(cd "$work/app" && javac -cp tensorlife.jar Consumer.java && java -cp tensorlife.jar:. Consumer)
cp "$root/tests/consumers/java/ModelConsumer.java" "$work/app/"
(cd "$work/app" && javac -cp tensorlife.jar ModelConsumer.java &&
  java -cp tensorlife.jar:. ModelConsumer "$work/tiny.gguf" "$expected")

echo "java: the same consumer as a named module requiring org.tensorlife, on the module path"
mkdir -p "$work/modapp/app"
printf 'module app {\n    requires org.tensorlife;\n}\n' >"$work/modapp/module-info.java"
{ echo "package app;"; cat "$root/tests/consumers/java/Consumer.java"; } >"$work/modapp/app/Consumer.java"
(cd "$work/modapp" && javac --module-path ../app/tensorlife.jar -d out module-info.java app/Consumer.java &&
  java --module-path ../app/tensorlife.jar:out -m app/app.Consumer)
jar --describe-module --file "$work/app/tensorlife.jar" | grep -q "^org.tensorlife" ||
  { echo "java: tensorlife.jar is not a named module"; exit 1; }
