#!/usr/bin/env bash
# tl_ops.h's promise on views, under several of OpenBLAS's kernel families (OPENBLAS_CORETYPE,
# which its dynamic-arch build honours; the normal runs take the machine's own): matmul on row
# views must keep the bits of contiguous operands with every family, and each run reports how
# many transposed-weight products differed in their last bits (allowed, within rounding).
#   check_blas_cores.sh BUILD_DIR
set -euo pipefail
build=$1
passed=0 failed=0
for core in Sandybridge Haswell Zen SkylakeX Cooperlake; do
  if out=$(OPENBLAS_CORETYPE=$core "$build/tests/test_promises" --filter 'promises/matmul_on_row_views*' --verbose 2>&1); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "$out" | grep -E "FAIL|\[----\]" | head -5
  fi
  echo "blas cores: $core: $(echo "$out" | grep -o 'transposed weights: .*' | head -1)"
done
echo "blas cores: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
