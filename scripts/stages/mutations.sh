#!/usr/bin/env bash
# The mutation run: each mutation of scripts/mutations.txt killed, survived or no longer applying (not in the full run).
source "$(dirname "$0")/lib.sh"
bash "$root/scripts/mutate.sh"
