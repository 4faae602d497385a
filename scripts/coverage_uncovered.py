#!/usr/bin/env python3
"""Every branch the suites never take, from gcovr's detailed JSON: each source line with its
untaken branches written to a list, and the count per reason printed.  The reason is read from
the line, first match wins (a line of several kinds counts once), except for one reason that gcov
itself tells: a branch of a template or SIMD-target instance that was never called while another
instance of the same line ran (the AVX2 or scalar copy of a kernel on an AVX-512 machine, a
dtype's copy no suite asks for):
  instance    in an instance never called here (other targets run under the windows and arm64 stages)
  allocator   the allocator refusing (reached by fault injection only where a test injects it;
              cJSON's builders fail only so)
  system      a system call failing (open, fstat, mmap, read, write, rename, getrandom, EINTR)
  limit       a size or count past what fits (int, size_t, 2^20-2^30 items, the handle table, a
              JSON text's TL_JSON_MAX_BYTES at that point): a guard no input small enough to test reaches
  earlier     an earlier call's failure passed on (TL_TRY, STEP, `st == TL_OK` chains)
  simd        vector code: a lane count or target whose instantiation this CPU never runs
  refusal     an input refused by a check no test or seed reaches
  call        a line that ran with no condition in it: the edge is a call's, unmarked by gcov
  named       a line scripts/coverage_reasons.txt gives its own reason (written after the line): an
              "other" line, or a refusal no input can reach
  other       the rest (a condition's other side, a short-circuit's untaken operand)
  python3 scripts/coverage_uncovered.py build-coverage/coverage-detail.json build-coverage/uncovered.txt [build-coverage]"""
import collections
import json
import os
import re
import subprocess
import sys

REASONS = [
    ("allocator", re.compile(r"allocation_refused|OUT_OF_MEMORY|no memory|bad_alloc|\.allocate\(|new \(|_memalign|"
                             r"cJSON_Add|cJSON_Create")),
    ("system", re.compile(r"errno|fstat|fcntl|mmap|munmap|MAP_FAILED|rename|fsync|getrandom|EINTR|::open|::close|pread|::write|\bstat\(|"
                          r"read_at\(|\.write\(|commit\(\)|map_file\(|strerror|fread\(")),
    ("limit", re.compile(r"size_t\(-1\)|SIZE_MAX|INT_MAX|INT64_MAX|UINT32_MAX|kMaxSlots|round_up\(|count_of\(|<< (2[0-9]|30)\)|\.append\(")),
    ("earlier", re.compile(r"TL_TRY|STEP\(|== TL_OK|!= TL_OK|status\b.*=")),
    ("simd", re.compile(r"hn::|_mm\d*_|__m\d+|Lanes\(|HWY_")),
    ("refusal", re.compile(r"\bfail\(|return false")),
]


def instance_ranges(build):
    """file -> {(first, last line): {function: calls}} for functions compiled more than once (a
    template's or a SIMD target's instances), from gcov's JSON of every .gcda; a header's function
    counts the calls of every unit that compiled it."""
    ranges = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    for folder, _, names in os.walk(build):
        for name in (n for n in names if n.endswith(".gcda")):
            text = subprocess.run(["gcov", "--json-format", "--stdout", "-o", name, name[:-5]],
                                  cwd=folder, capture_output=True, text=True).stdout
            for unit in (json.loads(row) for row in text.splitlines() if row.strip()):
                for f in unit["files"]:
                    for fn in f["functions"]:
                        span = (fn["start_line"], fn["end_line"])
                        ranges[os.path.realpath(f["file"])][span][fn["name"]] += fn["execution_count"]
    return ranges


def in_uncalled_instances(ranges, line, branches):
    """Of a line's branches, how many belong to instances never called, when another instance of
    the innermost function holding the line was called (each instance has the line's branches in
    equal share: gcov lists them one instance after another)."""
    holding = [span for span in ranges if span[0] <= line <= span[1]]
    if not holding:
        return 0
    calls = ranges[max(holding, key=lambda span: (span[0], -span[1]))].values()
    uncalled = sum(1 for c in calls if c == 0)
    if len(calls) < 2 or uncalled in (0, len(calls)) or branches % len(calls):
        return 0
    return branches // len(calls) * uncalled


# A line that ran and holds no condition branches only at a call (an exceptional edge gcov does
# not mark as a throw: a lambda's or an intrinsic's).
CONDITION = re.compile(r"\b(if|for|while|switch|case|do)\b|\?|&&|\|\|")

# scripts/coverage_reasons.txt: [file, text on the line, reason], for the lines no tag explains
# and the refusals no input reaches.
NAMED = [[part.strip() for part in row.split(" | ", 2)]
         for row in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "coverage_reasons.txt"), encoding="utf-8")
         if row.strip() and not row.startswith("#")]
used = set()

detail = json.load(open(sys.argv[1]))
ranges = instance_ranges(sys.argv[3]) if len(sys.argv) > 3 else {}
counts = collections.Counter()
with open(sys.argv[2], "w") as out:
    for f in sorted(detail["files"], key=lambda f: f["file"]):
        source = open(f["file"], encoding="utf-8").read().split("\n")
        for line in f["lines"]:
            untaken = sum(1 for b in line.get("branches", []) if b["count"] == 0)
            if not untaken:
                continue
            text = source[line["line_number"] - 1].strip()
            in_instances = min(untaken, in_uncalled_instances(ranges.get(os.path.realpath(f["file"]), {}),
                                                              line["line_number"], len(line["branches"])))
            reason = next((name for name, pattern in REASONS if pattern.search(text)), "other")
            if reason == "other" and line["count"] > 0 and not CONDITION.search(text):
                reason = "call"
            named = None if reason not in ("other", "refusal") else next(
                (i for i, (path, part, _) in enumerate(NAMED) if ("/" + f["file"]).endswith("/" + path) and part in text), None)
            if named is not None:
                reason = "named"
                used.add(named)
                text = f"{text}  [{NAMED[named][2]}]"
            counts["instance"] += in_instances
            counts[reason] += untaken - in_instances
            tags = ([f"{reason} {untaken - in_instances}"] if untaken > in_instances else []) + \
                ([f"instance {in_instances}"] if in_instances else [])
            out.write(f"{f['file']}:{line['line_number']}: {untaken} untaken, {', '.join(tags)}: {text}\n")
for i, (path, part, _) in enumerate(NAMED):
    if i not in used:
        print(f"coverage_reasons.txt names a line no longer uncovered (or tagged otherwise): {path}: {part}")
total = sum(counts.values())
print(f"untaken branches by reason ({total}; each line in {sys.argv[2]}): " +
      ", ".join(f"{name} {counts[name]}" for name, _ in [("instance", None)] + REASONS + [("call", None), ("named", None), ("other", None)]))
