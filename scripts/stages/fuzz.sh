#!/usr/bin/env bash
# A short libFuzzer run of each harness (ASan+UBSan; scripts/fuzz.sh for longer runs).
source "$(dirname "$0")/lib.sh"
bash "$root/scripts/fuzz.sh" "${TL_FUZZ_API_SECONDS:-40}" "${TL_FUZZ_ST_SECONDS:-20}" "${TL_FUZZ_GGUF_SECONDS:-20}"
