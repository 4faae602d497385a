#!/usr/bin/env bash
# The jar and the .nupkg carry every platform's natives (after the windows and arm64 stages).
source "$(dirname "$0")/lib.sh"
for platform in windows arm64; do
  [ -d "$root/build-$platform" ] || bash "$root/scripts/stages/$platform.sh"
done
release_build
passed=0
jar_files=$(unzip -Z1 "$root/build/bindings/java/tensorlife.jar")
for f in linux-x86_64/libtensorlife_jni.so windows-x86_64/tensorlife_jni.dll linux-aarch64/libtensorlife_jni.so; do
  grep -qx "native/$f" <<< "$jar_files" || { echo "the jar lacks native/$f"; exit 1; }
  passed=$((passed + 1))
done
echo "the jar: native/linux-x86_64, windows-x86_64 and linux-aarch64"
nupkg_files=$(unzip -Z1 "$root"/build/bindings/csharp/TensorLife.*.nupkg)
for f in linux-x64/native/libtensorlife_csharp.so win-x64/native/tensorlife_csharp.dll win-x64/native/tensorlife.dll \
         linux-arm64/native/libtensorlife_csharp.so linux-arm64/native/libtensorlife.so.1; do
  grep -qx "runtimes/$f" <<< "$nupkg_files" || { echo "the .nupkg lacks runtimes/$f"; exit 1; }
  passed=$((passed + 1))
done
natives=$(mktemp -d)
unzip -q "$root"/build/bindings/csharp/TensorLife.*.nupkg 'runtimes/*' -d "$natives"
file -b "$natives"/runtimes/win-x64/native/*.dll | grep -vq 'x86-64' && { echo "win-x64 natives are not x86-64 DLLs"; exit 1; }
file -b "$natives"/runtimes/linux-arm64/native/* | grep -vq 'ARM aarch64' && { echo "linux-arm64 natives are not arm64"; exit 1; }
passed=$((passed + 2))
echo "the .nupkg: runtimes/linux-x64, win-x64 and linux-arm64 natives, each of its platform"
rm -rf "$natives"
echo "packages: $passed passed, 0 failed"
