#!/usr/bin/env bash
# The Python binding: SWIG code and its extension built into BUILD_DIR/python for Debian's
# python3, then pytest twice: against the build tree and against an installed prefix.  The
# extension carries an rpath to libtensorlife: no LD_LIBRARY_PATH.
#   bindings/python/test.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
python=/usr/bin/python3
out="$build/python"
rm -rf "$out" && mkdir -p "$out/tensorlife/_raw"
cp "$here/tensorlife/__init__.py" "$out/tensorlife/"
: > "$out/tensorlife/_raw/__init__.py"
swig -python -I"$root/include" -o "$out/tensorlife_wrap.c" -outdir "$out/tensorlife/_raw" "$root/bindings/tl.i"
ext="$out/tensorlife/_raw/_tensorlife$($python-config --extension-suffix)"
build_ext() {  # $1: libdir of libtensorlife
  cc -O2 -fPIC -shared $($python-config --includes) -I"$root/include" "$out/tensorlife_wrap.c" \
     -L"$1" -Wl,-rpath,"$1" -ltensorlife -o "$ext"
}
build_ext "$build"
unset LD_LIBRARY_PATH
echo "python: against the build tree"
(cd "$out" && PYTHONPATH="$out" $python -m pytest -q -p no:cacheprovider --import-mode=append "$here/test_tensorlife.py")
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
build_ext "$(ls -d "$prefix"/lib* | head -n1)"
echo "python: against an installed prefix"
(cd "$out" && PYTHONPATH="$out" $python -m pytest -q -p no:cacheprovider --import-mode=append "$here/test_tensorlife.py")
