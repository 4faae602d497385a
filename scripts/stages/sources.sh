#!/usr/bin/env bash
# The sources themselves: the layers' includes, the generated lists, the README's programs, the build's rules.
source "$(dirname "$0")/lib.sh"
python3 "$root/scripts/check_layers.py" "$root"
python3 "$root/bindings/gen_lists.py" --check
/usr/bin/python3 "$root/scripts/readme_snippets.py"
python3 "$root/scripts/check_custom_commands.py" "$root"
