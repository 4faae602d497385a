#!/usr/bin/env bash
# The Python binding (SWIG, CPython): pytest, and a consumer of the wheel in a fresh venv.
source "$(dirname "$0")/lib.sh"
release_build
bash "$root/bindings/python/test.sh" "$root/build"
