#!/usr/bin/env bash
# Writes internal/raw/tensorlife.go and tensorlife_wrap.c from bindings/tl.i (SWIG), into
# OUT_DIR (default: internal/raw, the committed copy).  A repository tool: the module as
# downloaded carries the generated files and needs no SWIG.
#   bindings/go/generate.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/internal/raw}"
mkdir -p "$out" && out="$(cd "$out" && pwd)"
# From the root, with relative paths: SWIG writes the source path into its output.
cd "$root" && swig -go -cgo -intgosize 64 -package raw -Iinclude -Ibindings/runtime -o "$out/tensorlife_wrap.c" \
  -outdir "$out" bindings/tl.i
# The binding runtime beside it (cgo compiles every .c of the package): a copy, so that the
# module as downloaded builds alone.
for f in tlb.h tlb.c; do
  { echo "/* A copy of bindings/runtime/$f made by bindings/go/generate.sh; do not edit. */"; cat "bindings/runtime/$f"; } > "$out/$f"
done
