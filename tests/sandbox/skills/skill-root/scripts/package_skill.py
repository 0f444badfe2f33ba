#!/usr/bin/env python3
"""Packs a skill folder into NAME.skill (a zip) in an output folder, modelled on skill-creator's
package_skill.py: run as "python -m scripts.package_skill PATH OUT" from the skill root, it
imports its sibling through the package path."""
import sys
import zipfile
from pathlib import Path

from scripts.helper import say


def package(skill_path, out_dir):
    skill_path = Path(skill_path).resolve()
    out = Path(out_dir).resolve() / f"{skill_path.name}.skill"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(skill_path.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                z.write(f, f.relative_to(skill_path.parent))
    print(say(f"packed {out.name}"))


if __name__ == "__main__":
    package(sys.argv[1], sys.argv[2])
