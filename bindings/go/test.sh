#!/usr/bin/env bash
# The Go binding's tests:
#   1. the committed SWIG output and generated lists are current (regenerated and compared),
#   2. gofmt, go vet and go test against the build tree (tensorlife-uninstalled.pc),
#   3. a consumer module outside the tree (tests/consumers/go) that requires the module
#      through a replace to a copy of it, built with plain `go build` and PKG_CONFIG_PATH to an
#      installed prefix: no SWIG, no go generate, no LD_LIBRARY_PATH (an rpath to the prefix).
#   bindings/go/test.sh BUILD_DIR [--bench]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
export GOCACHE="${GOCACHE:-$build/go-cache}" GOPATH="${GOPATH:-$build/go-path}"
unset LD_LIBRARY_PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir "$work/generated"
bash "$here/generate.sh" "$work/generated"
for f in tensorlife.go tensorlife_wrap.c tlb.h tlb.c; do
  cmp -s "$work/generated/$f" "$here/internal/raw/$f" ||
    { echo "go: internal/raw/$f is stale against bindings/: run bindings/go/generate.sh"; exit 1; }
done
unformatted=$(cd "$here" && gofmt -l $(ls *.go))
[ -z "$unformatted" ] || { echo "go: not gofmt-formatted: $unformatted"; exit 1; }

cd "$here"
if [ "${2:-}" = "--bench" ]; then
  PKG_CONFIG_PATH="$build/pkgconfig" go test -run '^$' -bench "Add16|TrivialCgo" -count "${TL_BENCH_COUNT:-5}" .
  exit 0
fi
"$build/tests/write_tiny_llama" "$work/tiny.gguf"  # the C tests' tiny model, and the C API's tokens on it
expected=$("$build/tests/runner" "$work/tiny.gguf" --prompt "abc ab" --tokens 12 --temperature 0.9 --seed 5 |
  sed -n 's/^tokens: //p')
export TL_TINY_MODEL="$work/tiny.gguf"
echo "go test: against the build tree"
PKG_CONFIG_PATH="$build/pkgconfig" go vet .   # not internal/raw: SWIG's own code trips vet
PKG_CONFIG_PATH="$build/pkgconfig" go test -count=1 -v ./... 2>&1 | grep -E '^(=== RUN|--- |ok|FAIL|PASS|\s+\S+_test.go)' 

echo "go: a consumer module outside the tree, against an installed prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cp -r "$here" "$work/tensorlife-go"              # the module as a download would bring it
rm -rf "$work/tensorlife-go/internal/raw/"*.o
cp -r "$root/tests/consumers/go" "$work/app"
sed -i "s|TENSORLIFE_GO_MODULE|$work/tensorlife-go|" "$work/app/go.mod"
# A private prefix: its user points the loader at it (the .pc file carries no rpath).
pc_dir="$(ls -d "$work"/prefix/lib*/pkgconfig | head -n1)"
(cd "$work/app" && PKG_CONFIG_PATH="$pc_dir" CGO_LDFLAGS="-Wl,-rpath,$(dirname "$pc_dir")" go build -o app . && ./app "$work/tiny.gguf" "$expected")
