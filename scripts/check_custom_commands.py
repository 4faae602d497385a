#!/usr/bin/env python3
"""Fails where make -j may run one custom command twice at once.

CMake's Makefile generator gives a custom command's rule to every target that lists its
output; two such targets with no order between them may both run it, and a rule that starts
with rm -rf takes the files from under the other's compile (the C# wrapper of stop 28 lost
its SWIG callbacks so).  Of the targets holding a rule, one must come before all the others
(each of them depends on it): it runs the rule, and the others find its output made.  It
configures ROOT, every binding and test on, into a scratch folder and reads CMake's file API (codemodel v2: each target's sources name the rules it holds, <output>.rule).
  python3 scripts/check_custom_commands.py [ROOT]
"""
import json
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
with tempfile.TemporaryDirectory() as scratch:
    build = pathlib.Path(scratch)
    query = build / ".cmake/api/v1/query/codemodel-v2"
    query.parent.mkdir(parents=True)
    query.touch()
    subprocess.run(["cmake", "-S", str(root), "-B", str(build), "-DTL_BUILD_TESTS=ON", "-DTL_BUILD_BENCH=ON",
                    "-DTL_BUILD_EXAMPLES=ON", "-DTL_BUILD_JAVA=ON", "-DTL_BUILD_CSHARP=ON"],
                   check=True, stdout=subprocess.DEVNULL)
    reply = build / ".cmake/api/v1/reply"
    index = json.loads(max(reply.glob("index-*.json")).read_text())
    codemodel = next(o for o in index["objects"] if o["kind"] == "codemodel")
    configuration = json.loads((reply / codemodel["jsonFile"]).read_text())["configurations"][0]
    targets = {t["id"]: json.loads((reply / t["jsonFile"]).read_text()) for t in configuration["targets"]}

depends = {i: {d["id"] for d in t.get("dependencies", [])} for i, t in targets.items()}


def reaches(a, b, seen=None):
    """Whether target a depends on b, directly or through others."""
    seen = seen if seen is not None else set()
    for d in depends[a] - seen:
        seen.add(d)
        if d == b or reaches(d, b, seen):
            return True
    return False


holders = {}
for i, t in targets.items():
    own = f"CMakeFiles/{t['name']}.rule"
    for source in t.get("sources", []):
        if source["path"].endswith(".rule") and not source["path"].endswith(own):
            output = pathlib.Path(source["path"][:-len(".rule")])
            holders.setdefault(str(output.relative_to(build) if output.is_absolute() else output), []).append(i)

errors = [f"{output}: {', '.join(sorted(targets[i]['name'] for i in ids))} hold its rule, "
          f"and none comes before the others (add_dependencies on the one that should run it)"
          for output, ids in sorted(holders.items())
          if not any(all(o == i or reaches(o, i) for o in ids) for i in ids)]
for e in errors:
    print(e)
shared = sum(len(ids) > 1 for ids in holders.values())
print(f"custom commands: {len(holders)} rules in {len(targets)} targets, {shared} held by more than one: "
      + (f"{len(errors)} may run twice at once" if errors else "each runs in one target first"))
sys.exit(1 if errors else 0)
