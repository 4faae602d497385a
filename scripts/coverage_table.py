#!/usr/bin/env python3
"""Prints line and branch coverage per folder of impl/ and capi/ from gcovr's JSON summary.
  python3 scripts/coverage_table.py build-coverage/coverage.json [--files]"""
import collections
import json
import sys

summary = json.load(open(sys.argv[1]))
folders = collections.defaultdict(lambda: [0, 0, 0, 0])  # lines covered, lines, branches covered, branches
for f in summary["files"]:
    name = f["filename"]
    folder = name.rsplit("/", 1)[0] if "/" in name else "."
    for key in (folder, "all"):
        t = folders[key]
        t[0] += f["line_covered"]; t[1] += f["line_total"]; t[2] += f["branch_covered"]; t[3] += f["branch_total"]


def pct(a, b):
    return f"{100.0 * a / b:5.1f}%" if b else "   - "


print(f"{'folder':16} {'lines':>7} {'of':>6} {'branches':>9} {'of':>6}")
for folder in sorted(k for k in folders if k != "all") + ["all"]:
    lc, lt, bc, bt = folders[folder]
    print(f"{folder:16} {pct(lc, lt):>7} {lt:6d} {pct(bc, bt):>9} {bt:6d}")
print("impl/platform/win32.cpp: not measured (gcov does not run under wine here)")
if "--files" in sys.argv:
    for f in sorted(summary["files"], key=lambda f: f["filename"]):
        print(f"  {f['filename']:40} {pct(f['line_covered'], f['line_total'])} {pct(f['branch_covered'], f['branch_total'])}")
