#!/usr/bin/env bash
# The C# binding (SWIG, P/Invoke, Mono): its suites, xunit, and a consumer of the .nupkg.
source "$(dirname "$0")/lib.sh"
release_build
bash "$root/bindings/csharp/test.sh" "$root/build"
