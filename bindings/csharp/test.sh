#!/usr/bin/env bash
# The C# binding, built by CMake (-DTL_BUILD_CSHARP=ON) into BUILD_DIR/bindings/csharp:
#   1. the test suite, run with TensorLife.dll and its natives side by side,
#   2. a consumer outside the tree (tests/consumers/csharp) that sees only the installed
#      TensorLife.<version>.nupkg: unpacked as a restore would (lib/netstandard2.0 and
#      runtimes/linux-x64/native copied beside the program), `mcs -r:TensorLife.dll`, `mono`;
#      no dllmap, no environment variables, the prefix deleted first,
#   3. the installed lib/tensorlife/csharp folder, used in place (its wrapper finds the one
#      installed libtensorlife.so.N two folders up; no second copy beside it),
#   4. on .NET: the same suite as xunit facts (bindings/csharp/xunit) by `dotnet test` against
#      the .nupkg in a local folder feed, and a console app made with `dotnet new console`,
#      `dotnet add package TensorLife --source FEED` and `dotnet run`.
#   bindings/csharp/test.sh BUILD_DIR [--bench]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
out="$build/bindings/csharp"
[ -f "$out/TensorLife.dll" ] || { echo "csharp: $out/TensorLife.dll is missing: configure with -DTL_BUILD_CSHARP=ON"; exit 1; }
unset LD_LIBRARY_PATH MONO_PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/suite"
cp "$out/TensorLife.dll" "$out/libtensorlife_csharp.so" "$build"/libtensorlife.so.[0-9] "$work/suite/"
mcs -nologo -warnaserror -r:Facades/netstandard.dll -r:"$work/suite/TensorLife.dll" -out:"$work/suite/Test.exe" "$here/test/Test.cs" \
  "$here/test/Bench.cs"
if [ "${2:-}" = "--bench" ]; then  # Mono: P/Invoke and internal calls; .NET: BenchmarkDotNet
  TL_CS_PINVOKE=1 mono "$work/suite/Test.exe" --bench && mono "$work/suite/Test.exe" --bench
  mkdir "$work/feed" && cp "$out"/TensorLife.*.nupkg "$work/feed/"
  version=$(basename "$work"/feed/TensorLife.*.nupkg .nupkg) && version=${version#TensorLife.}
  echo "csharp (.NET $(dotnet --version), BenchmarkDotNet): add of 16 floats through C# against the same adds from C"
  DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 NUGET_PACKAGES="$work/nuget-cache" dotnet run -c Release \
    --project "$here/bench/Test.csproj" --artifacts-path "$work/dotnet" -p:TensorLifeFeed="$work/feed" \
    -p:TensorLifeVersion="$version" | grep -E '^\|'
  exit $?
fi
echo "csharp: the suite"
cp "$root/tests/golden/metadata.gguf" "$work/"  # the GGUF fixture (make_golden.py)
"$build/tests/write_tiny_llama" "$work/tiny.gguf"  # the C tests' tiny model, and the C API's tokens on it
expected=$("$build/tests/runner" "$work/tiny.gguf" --prompt "abc ab" --tokens 12 --temperature 0.9 --seed 5 |
  sed -n 's/^tokens: //p')
(cd "$work" && mono "$work/suite/Test.exe")
echo "csharp: Mono's internal calls registered by the native layer alone, with a stand-in for Mono and without"
cc -shared -fPIC -fvisibility=hidden "$root/tests/packaging/fake_mono.c" -o "$work/fake_mono.so"
cc -I"$root/include" "$root/tests/packaging/mono_registration.c" -o "$work/mono_registration" -ldl
"$work/mono_registration" "$out/natives/libtensorlife_csharp.so" | grep -E "^FAIL|passed"
"$work/mono_registration" "$out/natives/libtensorlife_csharp.so" "$work/fake_mono.so" | grep -E "^FAIL|passed"

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cp "$work"/prefix/share/tensorlife/nuget/TensorLife.*.nupkg "$work/"
installed="$(ls -d "$work"/prefix/lib*/tensorlife/csharp | head -n1)"
if ls "$installed" | grep -q '^libtensorlife\.so'; then echo "csharp: a second copy of libtensorlife in $installed"; exit 1; fi
echo "csharp: a consumer of the installed lib/tensorlife/csharp, in place (Mono's MONO_PATH names the folder)"
mkdir "$work/app2"
cp "$root/tests/consumers/csharp/Consumer.cs" "$work/app2/"
(cd "$work/app2" && mcs -nologo -r:Facades/netstandard.dll -r:"$installed/TensorLife.dll" Consumer.cs && MONO_PATH="$installed" mono Consumer.exe)
rm -rf "$work/prefix"  # the package alone from here on
echo "csharp: a consumer of the .nupkg alone"
mkdir "$work/app" "$work/pkg"
(cd "$work/pkg" && unzip -q "$work"/TensorLife.*.nupkg)
[ -f "$work/pkg/TensorLife.nuspec" ] || { echo "csharp: the .nupkg has no .nuspec"; exit 1; }
runpath=$(readelf -d "$work/pkg/runtimes/linux-x64/native/libtensorlife_csharp.so" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p')
[ "$runpath" = '$ORIGIN' ] || { echo "csharp: the packaged wrapper's RUNPATH is '$runpath', not \$ORIGIN alone"; exit 1; }
cp "$work/pkg/lib/netstandard2.0/TensorLife.dll" "$work"/pkg/runtimes/linux-x64/native/* "$root/tests/consumers/csharp/Consumer.cs" "$work/app/"
(cd "$work/app" && mcs -nologo -r:Facades/netstandard.dll -r:TensorLife.dll Consumer.cs && mono Consumer.exe)

# .NET, as its users take a package: a local folder feed holding the .nupkg alone.
mkdir "$work/feed" && cp "$work"/TensorLife.*.nupkg "$work/feed/"
version=$(basename "$work"/feed/TensorLife.*.nupkg .nupkg) && version=${version#TensorLife.}
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 NUGET_PACKAGES="$work/nuget-cache"  # no cache from earlier runs
echo "csharp: the suite on .NET ($(dotnet --version)) as xunit facts, against the package from the feed"
dotnet test "$here/xunit/TensorLife.XunitTests.csproj" --artifacts-path "$work/dotnet" \
  -p:TensorLifeFeed="$work/feed" -p:TensorLifeVersion="$version" -p:TinyModel="$work/tiny.gguf" 2>&1 | grep -E '^(Passed!|Failed!)|error|\[FAIL\]'
echo "csharp: a .NET consumer made with dotnet new console, dotnet add package, dotnet run"
(cd "$work" && dotnet new console -o dotnet-app >/dev/null && cd dotnet-app &&
  dotnet add package TensorLife --version "$version" --source "$work/feed" >/dev/null &&
  cp "$root/tests/consumers/csharp/Consumer.cs" Program.cs && dotnet run)
echo "csharp: text in, text out from the package: dotnet run, then published ahead of time (PublishAot)"
(cd "$work" && dotnet new console -o model-app >/dev/null && cd model-app &&
  dotnet add package TensorLife --version "$version" --source "$work/feed" >/dev/null &&
  cp "$root/tests/consumers/csharp/ModelConsumer.cs" Program.cs && dotnet run -- "$work/tiny.gguf" "$expected" &&
  dotnet publish -c Release -r linux-x64 -p:PublishAot=true -o "$work/aot" >"$work/aot.log" 2>&1 ||
    { tail -30 "$work/aot.log"; exit 1; })
"$work/aot/model-app" "$work/tiny.gguf" "$expected"
