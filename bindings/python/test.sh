#!/usr/bin/env bash
# The Python binding (Debian's python3, the one scripts/setup.sh installs NumPy for), its
# extension always built by setup.py (the one build path):
#   1. pytest against the build tree (setup.py's build_ext over BUILD_DIR's library),
#   2. an sdist and the wheel built from it in a temporary folder outside the checkout
#      (python3 -m build --no-isolation), the wheel installed into a fresh virtual
#      environment (no NumPy, no pytest), the shared scenario (tests/consumers/python) run from
#      an empty folder with no PYTHONPATH or LD_LIBRARY_PATH and the build tree's library
#      hidden, to show the wheel carries its own,
#   3. `pip install --no-build-isolation bindings/python` into another fresh environment
#      (with the system's site packages: setuptools, wheel and NumPy, offline).
#   bindings/python/test.sh BUILD_DIR [--bench]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
python=/usr/bin/python3
unset LD_LIBRARY_PATH PYTHONPATH
out="$build/python"
rm -rf "$out" && mkdir -p "$out/tensorlife"
cp "$here"/tensorlife/*.py "$out/tensorlife/"
(cd "$here" && TL_CORE_BUILD="$build" $python setup.py -q build_ext --build-lib "$out" --build-temp "$out/temp" \
   >"$out/build.log" 2>&1) || { cat "$out/build.log"; exit 1; }
pytest_args=(-q -p no:cacheprovider --import-mode=append)  # not the source folder's package
if [ "${2:-}" = "--bench" ]; then
  (cd "$out" && PYTHONPATH="$out" $python -m pytest "${pytest_args[@]}" -s -k bench "$here/test_tensorlife.py")
  exit 0
fi
echo "python: pytest against the build tree"
"$build/tests/write_tiny_llama" "$out/tiny.gguf"  # test_model.py's model, and the consumer's
expected=$("$build/tests/runner" "$out/tiny.gguf" --prompt "abc ab" --tokens 12 --temperature 0.9 --seed 5 |
  sed -n 's/^tokens: //p')
(cd "$out" && TL_REQUIRE_NUMPY=1 PYTHONPATH="$out" $python -m pytest "${pytest_args[@]}" -s "$here"/test_*.py)

work=$(mktemp -d)
trap 'rm -rf "$work"; rm -rf "$here/build" "$here"/*.egg-info' EXIT
echo "python: the sdist, and the wheel built from it outside the checkout, in a fresh virtual environment"
$python -m build --no-isolation --outdir "$work/dist" "$here" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
grep -q "build-via-sdist" "$work/build.log" || { echo "python: the wheel was not built from the sdist"; exit 1; }
tar -tzf "$work"/dist/tensorlife-*.tar.gz > "$work/sdist.list"
grep -q "/core/impl/kernels/dot_rows.cpp" "$work/sdist.list" || { echo "python: the sdist lacks the core's sources"; exit 1; }
wheel=$(ls "$work"/dist/tensorlife-*.whl)
unzip -l "$wheel" > "$work/wheel.list"  # (not piped into grep -q: under pipefail its early exit fails unzip)
grep -q "tensorlife/libtensorlife.so.[0-9]" "$work/wheel.list" || { echo "the wheel lacks libtensorlife.so.N"; exit 1; }
(mkdir "$work/unpacked" && cd "$work/unpacked" && unzip -q "$wheel")
runpath=$(readelf -d "$work"/unpacked/tensorlife/_tensorlife*.so | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p')
[ "$runpath" = '$ORIGIN' ] || { echo "python: the wheel's extension RUNPATH is '$runpath', not \$ORIGIN alone"; exit 1; }
$python -m venv "$work/venv"
"$work/venv/bin/pip" install -q --no-index "$wheel"
mkdir "$work/empty" && cp "$root"/tests/consumers/python/*.py "$here"/test_*.py "$root/tests/golden/metadata.gguf" "$work/empty/"
# The build tree's library out of reach: the wheel must bring its own.
soname=$(basename "$build"/libtensorlife.so.[0-9])
mv "$build/$soname" "$build/$soname.hidden"
trap 'mv "$build/$soname.hidden" "$build/$soname"; rm -rf "$work" "$here/build" "$here"/*.egg-info' EXIT
(cd "$work/empty" && "$work/venv/bin/python" scenario.py)
# Text in, text out: the C tests' tiny model, and the tokens the C API drew from the same seed.
cp "$out/tiny.gguf" "$work/empty/"
(cd "$work/empty" && "$work/venv/bin/python" model_scenario.py tiny.gguf "$expected")
mv "$build/$soname.hidden" "$build/$soname"
trap 'rm -rf "$work" "$here/build" "$here"/*.egg-info' EXIT

echo "python: pip install --no-build-isolation of the source folder, in a fresh virtual environment"
$python -m venv --system-site-packages "$work/venv2"
"$work/venv2/bin/pip" install -q --no-index --no-build-isolation "$here" >"$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; exit 1; }
(cd "$work/empty" && TL_REQUIRE_NUMPY=1 "$work/venv2/bin/python" -m pytest "${pytest_args[@]}" test_*.py)
(cd "$work/empty" && "$work/venv2/bin/python" zero_copy.py)  # the README's NumPy/PyTorch example
