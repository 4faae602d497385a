#!/usr/bin/env bash
# The Java binding (SWIG, JNI): its suite, and a consumer of the installed jar.
source "$(dirname "$0")/lib.sh"
release_build
bash "$root/bindings/java/test.sh" "$root/build"
