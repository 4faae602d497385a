#!/usr/bin/env bash
# Installs the built library into a temporary prefix, then builds and runs an outside C program
# twice: once with `pkg-config --cflags --libs tensorlife`, once with find_package(tensorlife).
set -euo pipefail
build_dir="$1"
source_dir="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -n1)

export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c99 -Wall -Werror "$source_dir/consumer/main.c" -o "$work/by-pkg-config" $(pkg-config --cflags --libs tensorlife)
"$work/by-pkg-config"

cmake -S "$source_dir/consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer-build" >/dev/null
"$work/consumer-build/consumer"
echo "install ok: pkg-config and find_package consumers ran from $work/prefix"
