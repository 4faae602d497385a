#!/usr/bin/env bash
# The Go binding's tests: generates the SWIG layer, then runs `go test` twice, against the
# build tree (tensorlife-uninstalled.pc) and against an installed prefix (tensorlife.pc), with
# no LD_LIBRARY_PATH: both .pc files carry an rpath.
#   bindings/go/test.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "$1" && pwd)"
cd "$here"
export GOFLAGS=-mod=mod GOCACHE="${GOCACHE:-$build/go-cache}" GOPATH="${GOPATH:-$build/go-path}"
(cd internal/raw && go generate)
unset LD_LIBRARY_PATH
echo "go test: against the build tree"
PKG_CONFIG_PATH="$build/pkgconfig" go vet .
PKG_CONFIG_PATH="$build/pkgconfig" go test -count=1 ./...
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "go test: against an installed prefix"
PKG_CONFIG_PATH="$(ls -d "$prefix"/lib*/pkgconfig | head -n1)" go test -count=1 ./...
