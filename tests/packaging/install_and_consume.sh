#!/usr/bin/env bash
# Installs the built library into a temporary prefix, then builds and runs an outside C program
# with `pkg-config --cflags --libs tensorlife` and with find_package(tensorlife) (the shared
# library, and tensorlife::tensorlife_static), and statically with `pkg-config --static` from a
# static-only copy of the prefix.  Each static program must not need libtensorlife.so.
set -euo pipefail
build_dir="$1"
source_dir="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -n1)
# What distributions check: the license installed, no rpath in the .pc file.
[ -f "$work/prefix/share/doc/tensorlife/LICENSE" ] || { echo "install: no share/doc/tensorlife/LICENSE"; exit 1; }
if grep -q -- '-rpath' "$libdir/pkgconfig/tensorlife.pc"; then echo "install: the .pc file sets an rpath"; exit 1; fi
not_dynamic() {  # $1: a program that must have libtensorlife linked in
  local needed
  needed=$(objdump -p "$1")  # (not piped into grep -q: under pipefail its early exit could hide a match)
  if grep -q 'NEEDED.*libtensorlife' <<<"$needed"; then echo "$1 needs libtensorlife.so"; exit 1; fi
}

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# A private prefix, not the system's: its user points the loader at it (the .pc file carries no
# rpath, as distributions require).
cc -std=c99 -Wall -Werror "$source_dir/consumer/main.c" -o "$work/by-pkg-config" $(pkg-config --cflags --libs tensorlife) \
  -Wl,-rpath,"$(pkg-config --variable=libdir tensorlife)"
"$work/by-pkg-config"
# The README's C program, as a reader builds it.
cc -std=c99 -Wall -Werror "$source_dir/../consumers/c/decode_loop.c" -o "$work/decode_loop" \
  $(pkg-config --cflags --libs tensorlife) -Wl,-rpath,"$(pkg-config --variable=libdir tensorlife)"
stale=$("$work/decode_loop")
grep -q "storage 'decode-step' #1 gen 99 is closed" <<<"$stale" || { echo "README's C program printed: $stale"; exit 1; }

cmake -S "$source_dir/consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer-build" >/dev/null
"$work/consumer-build/consumer"
not_dynamic "$work/consumer-build/consumer_static"
"$work/consumer-build/consumer_static"

# A static-only installation (as a -dev-static split ships it): -ltensorlife finds the archive,
# and Requires.private/Libs.private bring OpenBLAS, cJSON and the C++ runtime.
cp -a "$work/prefix" "$work/static-prefix"
rm -f "$work"/static-prefix/lib*/libtensorlife.so*
export PKG_CONFIG_PATH="$(ls -d "$work"/static-prefix/lib*/ | head -n1)pkgconfig"
cc -std=c99 -Wall -Werror "$source_dir/consumer/main.c" -o "$work/by-pkg-config-static" $(pkg-config --static --cflags --libs tensorlife)
rm -rf "$work/static-prefix"   # nothing of the prefix is needed at run time
not_dynamic "$work/by-pkg-config-static"
"$work/by-pkg-config-static"
echo "install ok: pkg-config (shared and --static) and find_package (shared and static) consumers ran from $work/prefix"
