#!/usr/bin/env bash
# The NumPy golden files of the conformance suite, regenerated and compared with the committed ones.
source "$(dirname "$0")/lib.sh"
golden=$(mktemp -d)
/usr/bin/python3 "$root/tests/golden/make_golden.py" "$golden"  # Debian's python3, with setup's NumPy
for f in golden.json golden.safetensors metadata.gguf; do
  cmp -s "$golden/$f" "$root/tests/golden/$f" ||
    { echo "tests/golden/$f is stale: run /usr/bin/python3 tests/golden/make_golden.py tests/golden"; exit 1; }
done
rm -rf "$golden"
echo "golden files: 3 passed, 0 failed"
