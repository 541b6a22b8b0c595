"""The README's map of the package names every folder and top-level module of st_debias, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import st_debias

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_package_map_matches_the_tree() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("**Map of the package**") :]
    section = section[: section.index("```bash")]
    mapped = set(re.findall(r"^\| `([\w/.]+)` \|", section, flags=re.MULTILINE))
    root = Path(st_debias.__file__).parent
    tree = {f"{p.name}/" for p in root.iterdir() if (p / "__init__.py").is_file()}
    tree |= {p.name for p in root.glob("*.py") if p.name != "__init__.py"}
    assert mapped == tree
