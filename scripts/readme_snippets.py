"""The README's programs are the consumer programs the test command runs: each code block under a
`<!-- run by the test command: PATH -->` line must be PATH's text exactly, so what a reader
copies is what was built and run (from outside the tree, against the installed artifact).
    python3 scripts/readme_snippets.py   (exit 1 with a diff when one drifted)"""
import difflib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!-- run by the test command: (\S+) -->\n(?:(?!```).*\n){0,3}```[a-z]*\n(.*?)```\n", re.M | re.S)

readme = (ROOT / "README.md").read_text()
found = MARK.findall(readme)
stale = 0
for path, block in found:
    text = (ROOT / path).read_text()
    if block != text:
        stale += 1
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), block.splitlines(True), path, "README.md"))
if not found:
    sys.exit("readme snippets: no marked program in README.md")
if stale:
    sys.exit(f"readme snippets: {stale} of {len(found)} differ from their files")
print(f"readme snippets: {len(found)} programs match the files the test command runs "
      f"({', '.join(p for p, _ in found)})")
