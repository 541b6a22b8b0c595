"""Run the Python examples of the README and every docs page, each in a fresh namespace of one process.

Usage: ``python tests/docs_examples.py FAST|SLOW PAGE...`` (run by ``tests/test_docs_code.py``). A block runs
as a reader would paste it. The line before a block may say why it does not run in the default suite::

    <!-- example: slow -->              runs minutes: only under ``pytest -m slow``
    <!-- example: needs ray -->         needs an optional package: runs where it is installed
    <!-- example: needs the hub -->     downloads a model: runs where HF_HUB_OFFLINE is not set

Prints one line per block and the traceback of each failure; exits 1 when any block failed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
from pathlib import Path

BLOCK = re.compile(r"(?:<!-- example: (?P<marker>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)


def examples(page: Path) -> list[tuple[int, str | None, str]]:
    """(line, marker, code) of each ``python`` block of ``page``."""
    text = page.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, match.start("code")) + 1, match.group("marker"), match.group("code"))
        for match in BLOCK.finditer(text)
    ]


def skip_reason(marker: str | None, slow: bool) -> str | None:
    """Why a block with ``marker`` does not run in this pass (None: it runs)."""
    if marker is None:
        return "runs in the fast pass" if slow else None
    if marker == "slow":
        return None if slow else "slow"
    if marker == "needs the hub":
        return "offline (HF_HUB_OFFLINE=1)" if os.environ.get("HF_HUB_OFFLINE") == "1" else None
    package = marker.removeprefix("needs ")
    if marker.startswith("needs ") and importlib.util.find_spec(package) is None:
        return f"{package} is not installed"
    if marker.startswith("needs "):
        return None
    raise ValueError(f"unknown example marker {marker!r}")


def main(argv: list[str]) -> int:
    slow = argv[0] == "SLOW"
    failed = 0
    for name in argv[1:]:
        for line, marker, code in examples(Path(name)):
            reason = skip_reason(marker, slow)
            if reason:
                print(f"skipped {name}:{line} ({reason})", flush=True)
                continue
            try:
                exec(compile(code, f"{name}:{line}", "exec"), {"__name__": "__main__"})  # noqa: S102
            except BaseException:  # noqa: BLE001 - every failure is reported with its page and line
                failed += 1
                print(f"FAILED {name}:{line}\n{traceback.format_exc()}", flush=True)
            else:
                print(f"ran {name}:{line}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
