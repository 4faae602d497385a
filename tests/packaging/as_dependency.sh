#!/usr/bin/env bash
# tensorlife as a dependency of a parent CMake project (tests/packaging/parent), by
# add_subdirectory and by FetchContent from a local path, with only the library's own
# dependencies in sight: pkg-config sees openblas, libcjson, libhwy and libpcre2-8 alone (not Criterion), so any
# lookup of a test, benchmark or binding dependency would fail the configure.  Each parent
# program runs, and neither the tests nor the bindings were configured.
#   tests/packaging/as_dependency.sh
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The sources alone (what a vendored copy or a release tarball holds), no build trees.
mkdir -p "$work/tensorlife"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$work/tensorlife"
else
  tar -C "$src" --exclude='./build*' -cf - . | tar -xf - -C "$work/tensorlife"
fi
mkdir -p "$work/pc"
for module in openblas libcjson libhwy libpcre2-8; do cp "$(pkg-config --variable=pcfiledir "$module")/$module.pc" "$work/pc/"; done
export PKG_CONFIG_LIBDIR="$work/pc" PKG_CONFIG_PATH=""

for how in subdirectory fetchcontent; do
  build="$work/parent-$how"
  cmake -S "$src/tests/packaging/parent" -B "$build" -DTL_HOW=$how -DTL_SOURCE="$work/tensorlife" >/dev/null
  cmake --build "$build" -j"$(nproc)" >/dev/null
  "$build/app"
  "$build/app_static"
  cache="$build/CMakeCache.txt"
  grep -q '^TL_BUILD_TESTS:BOOL=OFF$' "$cache" || { echo "as_dependency ($how): the tests were configured"; exit 1; }
  if grep -q '^TL_FOUND_SWIG' "$cache"; then echo "as_dependency ($how): SWIG was looked for"; exit 1; fi
  echo "as_dependency ok: $how, with pkg-config seeing only openblas, libcjson, libhwy and libpcre2-8"
done
