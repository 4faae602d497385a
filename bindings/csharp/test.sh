#!/usr/bin/env bash
# The C# binding: SWIG (P/Invoke) code and its native wrapper built into BUILD_DIR/csharp,
# TensorLife.dll compiled with mcs, the test run with mono twice: from the build tree and from
# an installed prefix.  Mono finds the native wrapper through TensorLife.dll.config (a dllmap
# written here with its absolute path); the wrapper carries an rpath to libtensorlife.
#   bindings/csharp/test.sh BUILD_DIR [--bench]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
out="$build/csharp"
rm -rf "$out" && mkdir -p "$out/gen"
swig -csharp -namespace TensorLife.Raw -dllimport tensorlife_csharp -I"$root/include" -o "$out/tensorlife_csharp.c" \
  -outdir "$out/gen" "$root/bindings/tl.i" 2>&1 | grep -v "Warning 453" || true
build_native() {  # $1: libdir of libtensorlife, $2: output .so
  cc -O2 -fPIC -shared -I"$root/include" "$out/tensorlife_csharp.c" -L"$1" -Wl,-rpath,"$1" -ltensorlife -o "$2"
}
dllmap() {  # $1: the native wrapper's path
  printf '<configuration>\n  <dllmap dll="tensorlife_csharp" target="%s"/>\n</configuration>\n' "$1" > "$out/TensorLife.dll.config"
}
build_native "$build" "$out/libtensorlife_csharp.so"
mcs -nologo -warnaserror -target:library -out:"$out/TensorLife.dll" "$out"/gen/*.cs "$here/src/TensorLife.cs"
mcs -nologo -warnaserror -r:"$out/TensorLife.dll" -out:"$out/Test.exe" "$here/test/Test.cs"
dllmap "$out/libtensorlife_csharp.so"
unset LD_LIBRARY_PATH
if [ "${2:-}" = "--bench" ]; then mono "$out/Test.exe" --bench; exit 0; fi
echo "csharp: from the build tree"
mono "$out/Test.exe"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib* | head -n1)
build_native "$libdir" "$libdir/libtensorlife_csharp.so"
dllmap "$libdir/libtensorlife_csharp.so"
echo "csharp: from an installed prefix"
mono "$out/Test.exe"
