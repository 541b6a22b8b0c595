"""The README's table of guarantees names tests that exist: each row's test files, functions and parametrize ids."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "### What is guaranteed, and the test that holds it"
NODE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)(?:\[([^\]]+)\])?`")


def _table_rows() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n\n", section.index("| guarantee |"))]
    return [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| guarantee")]


def _parametrize_ids(path: Path, function: str) -> set[str] | None:
    """The ids of ``function``'s parametrize cases named in its file (literal ids, or literal string values, or
    the keys of a module-level dict the cases come from); None when the file does not say them literally."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    dicts = {
        target.id: {key.value for key in node.value.keys if isinstance(key, ast.Constant)}
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(getattr(node, "value", None), ast.Dict)
        for target in ([node.target] if isinstance(node, ast.AnnAssign) else node.targets)
        if isinstance(target, ast.Name)
    }
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name == function):
            continue
        ids: set[str] = set()
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("parametrize")):
                continue
            values = {ast.unparse(keyword.value) for keyword in decorator.keywords if keyword.arg == "ids"}
            ids |= {name for value in values for name in dicts.get(value.removeprefix("list(").removesuffix(")"), ())}
            if len(decorator.args) > 1 and isinstance(decorator.args[1], ast.List | ast.Tuple):
                ids |= {item.value for item in decorator.args[1].elts if isinstance(item, ast.Constant)}
        return ids
    return None


def test_every_test_the_reliability_table_names_exists():
    """Failure guarded: the README promises a guarantee "held by" a test that was renamed or removed."""
    rows = _table_rows()
    assert len(rows) >= 10
    missing = []
    for row in rows:
        nodes = NODE.findall(row)
        assert nodes, f"a row names no test: {row[:80]}"
        for file, function, case in nodes:
            ids = _parametrize_ids(ROOT / file, function) if (ROOT / file).is_file() else None
            if ids is None:
                missing.append(f"{file}::{function}")
            elif case and case not in ids:
                missing.append(f"{file}::{function}[{case}]")
    assert not missing, "named in the README's reliability table, not found:\n" + "\n".join(missing)
