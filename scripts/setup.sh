#!/usr/bin/env bash
# Installs, with apt, the Debian 12 packages that tensorlife's build, demo and tests need and
# that are missing.  Safe to run again: with everything present it changes nothing.
set -euo pipefail

packages=(
  cmake g++ make pkg-config        # the build
  libopenblas-dev                  # matmul (sgemm/dgemm)
  libcriterion-dev                 # the C conformance suite
  libcjson-dev                     # safetensors headers and JSON reports
  libhwy-dev                       # Google Highway: the SIMD kernels, dispatched at run time
  libpcre2-dev                     # PCRE2: Unicode classes of the BPE pre-tokenizers
  abigail-tools                    # the ABI check against capi/abi/ (abidw, abidiff)
  valgrind                         # the memory check in the test command
  gcovr                            # line and branch coverage of the suites (the coverage stage)
  clang libclang-rt-14-dev         # libFuzzer and its sanitizer runtimes
  swig golang-go                   # the Go binding
  openjdk-17-jdk-headless          # the Java binding (jar with its JNI library inside)
  mono-mcs mono-runtime mono-devel # the C# suite under Mono (netstandard facades for mcs)
  python3-dev python3-pytest       # the Python binding
  zlib1g-dev                       # .NET's ahead-of-time compiler links it (the C# consumer's PublishAot)
  python3-venv python3-build python3-setuptools python3-wheel  # its wheel, pip-installed into a venv
  python3 python3-numpy            # NumPy interop; the independent safetensors writer in the tests
  libdlpack-dev                    # DLPack's header: the Python tensors' zero-copy export to PyTorch
  python3-torch                    # the PyTorch Llama reference (scripts/llama_reference.py)
  zip unzip file                   # reading packages back in the consumer tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
