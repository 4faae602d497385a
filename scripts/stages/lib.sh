# Sourced by every stage: the checkout's root, and the builds that more than one stage needs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The release build with tests, benchmarks, examples and every binding; the jar and the .nupkg
# carry the cross builds' natives where the windows and arm64 stages have made them.
release_build() {
  local natives=()
  [ -d "$root/build-windows/bindings/csharp/natives" ] &&
    natives+=(-DTL_CSHARP_NATIVES_WIN_X64="$root/build-windows/bindings/csharp/natives")
  [ -d "$root/build-arm64/bindings/csharp/natives" ] &&
    natives+=(-DTL_CSHARP_NATIVES_LINUX_ARM64="$root/build-arm64/bindings/csharp/natives")
  local java_extra=()
  for platform in windows arm64; do
    [ -d "$root/build-$platform/bindings/java/natives" ] && java_extra+=("$root/build-$platform/bindings/java/natives")
  done
  natives+=(-DTL_JAVA_NATIVES_EXTRA="$(IFS=';'; echo "${java_extra[*]:-}")")
  bash "$root/scripts/build.sh" "$root/build" -DTL_BUILD_TESTS=ON -DTL_BUILD_BENCH=ON -DTL_BUILD_EXAMPLES=ON \
    -DTL_BUILD_JAVA=ON -DTL_BUILD_CSHARP=ON "${natives[@]}"
}

# The real vocabularies (npm: tests/vocabularies/package.json, locked), in build-npm/node_modules.
npm_vocabularies() {
  mkdir -p "$root/build-npm"
  cp "$root/tests/vocabularies/package.json" "$root/tests/vocabularies/package-lock.json" "$root/build-npm/"
  (cd "$root/build-npm" && npm ci --ignore-scripts --no-audit --no-fund > /dev/null)
}

# llama.cpp as NuGet ships it (tests/llamacpp: LLamaSharp 0.30.0), built into build-llamacpp/.
llamacpp_reference() {
  dotnet build -c Release -nologo -v q "$root/tests/llamacpp/LlamaCppReference.csproj" -o "$root/build-llamacpp" > /dev/null
}
