#!/usr/bin/env bash
# The Go binding (SWIG, cgo): go test, and a consumer module outside the tree.
source "$(dirname "$0")/lib.sh"
release_build
bash "$root/bindings/go/test.sh" "$root/build"
