#!/usr/bin/env python3
"""Fails on an #include "..." under impl/ or capi/ that points up the layer order.

The order is TL_LAYERS in CMakeLists.txt (lowest first), after the public headers
(include/tensorlife), which every layer may include.  A file may include its own layer's
headers and those of layers below it; an include without a folder is its own folder's.
  python3 scripts/check_layers.py [ROOT]
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
match = re.search(r"set\(TL_LAYERS ([a-z ]+)\)", (root / "CMakeLists.txt").read_text())
if not match:
    sys.exit("check_layers: no set(TL_LAYERS ...) in CMakeLists.txt")
layers = ["tensorlife"] + match.group(1).split()
rank = {name: i for i, name in enumerate(layers)}

files = sorted(p for d in ("impl", "capi") for p in (root / d).rglob("*") if p.suffix in (".h", ".cpp", ".c"))
errors = []
for path in files:
    folder = path.parent.name
    if folder not in rank:
        errors.append(f"{path.relative_to(root)}: folder '{folder}' is not a layer in TL_LAYERS")
        continue
    for number, line in enumerate(path.read_text().splitlines(), 1):
        include = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not include:
            continue
        target = include.group(1).split("/")[0] if "/" in include.group(1) else folder
        if target not in rank:
            errors.append(f"{path.relative_to(root)}:{number}: includes '{include.group(1)}', in no layer")
        elif rank[target] > rank[folder]:
            errors.append(f"{path.relative_to(root)}:{number}: {folder} includes '{include.group(1)}', "
                          f"of {target}, a layer above it")
for e in errors:
    print(e)
print(f"layers: {len(files)} files, {' <- '.join(layers)}: "
      + (f"{len(errors)} includes point up" if errors else "no include points up"))
sys.exit(1 if errors else 0)
