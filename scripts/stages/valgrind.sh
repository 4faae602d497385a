#!/usr/bin/env bash
# The conformance suites of the release build under valgrind: memory errors and leaks, in every forked test.
source "$(dirname "$0")/lib.sh"
release_build
logs=$(mktemp -d)
for t in "$root"/build/tests/test_*; do
  LD_PRELOAD="$root/build/tests/libvalgrind_hwy_timer.so" \
  valgrind --trace-children=yes -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --show-leak-kinds=definite,indirect --trace-children-skip="*python*,*/rm,*/sh" --log-file="$logs/$(basename "$t").%p.log" "$t" --jobs 1 -q >/dev/null 2>&1 ||
    { echo "valgrind: $t failed"; exit 1; }
done
if [ -n "$(find "$logs" -name '*.log' -size +0)" ]; then  # (no pipe into grep -q: under pipefail a SIGPIPE would hide errors)
  find "$logs" -name '*.log' -size +0 -exec cat {} +
  echo "valgrind: errors or leaks reported"; exit 1
fi
echo "valgrind: $(ls "$logs" | wc -l) processes checked, no errors, no leaks"
rm -rf "$logs"
