#!/usr/bin/env python3
"""Every branch the suites never take, from gcovr's detailed JSON: each source line with its
untaken branches written to a list, and the count per reason printed.  The reason is read from
the line, first match wins (a line of several kinds counts once):
  allocator   the allocator refusing (reached by fault injection only where a test injects it)
  system      a system call failing (open, fstat, mmap, write, rename, getrandom, EINTR)
  earlier     an earlier call's failure passed on (TL_TRY, STEP, `st == TL_OK` chains)
  simd        vector code: a lane count or target whose instantiation this CPU never runs
  refusal     an input refused by a check no test or seed reaches
  other       the rest (a condition's other side, a short-circuit's untaken operand)
  python3 scripts/coverage_uncovered.py build-coverage/coverage-detail.json build-coverage/uncovered.txt"""
import collections
import json
import re
import sys

REASONS = [
    ("allocator", re.compile(r"allocation_refused|OUT_OF_MEMORY|no memory|bad_alloc|\.allocate\(|new \(|_memalign")),
    ("system", re.compile(r"errno|fstat|fcntl|mmap|munmap|MAP_FAILED|rename|fsync|getrandom|EINTR|::open|::close|pread|::write|\bstat\(")),
    ("earlier", re.compile(r"TL_TRY|STEP\(|== TL_OK|!= TL_OK|status\b.*=")),
    ("simd", re.compile(r"hn::|_mm\d*_|__m\d+|Lanes\(|HWY_")),
    ("refusal", re.compile(r"\bfail\(|return false")),
]

detail = json.load(open(sys.argv[1]))
counts = collections.Counter()
with open(sys.argv[2], "w") as out:
    for f in sorted(detail["files"], key=lambda f: f["file"]):
        source = open(f["file"], encoding="utf-8").read().split("\n")
        for line in f["lines"]:
            untaken = sum(1 for b in line.get("branches", []) if b["count"] == 0)
            if not untaken:
                continue
            text = source[line["line_number"] - 1].strip()
            reason = next((name for name, pattern in REASONS if pattern.search(text)), "other")
            counts[reason] += untaken
            out.write(f"{f['file']}:{line['line_number']}: {untaken} untaken, {reason}: {text}\n")
total = sum(counts.values())
print(f"untaken branches by reason ({total}; each line in {sys.argv[2]}): " +
      ", ".join(f"{name} {counts[name]}" for name, _ in REASONS + [("other", None)]))
