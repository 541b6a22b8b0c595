"""The layout of ``benchmarks/``: self-contained studies beside a shared harness, apart from the library and the
tests, with every result stamped or archived and an index and decisions page free of the lab notebook's
issue numbers, commit hashes and dates."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

from tests.test_docs import DEVELOPMENT_DATE, ISSUE_REFERENCE, _committed_files, _nav_pages

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
ARCHIVE = "archive"
INDEX_PAGES = (BENCHMARKS / "README.md", ROOT / "docs" / "decisions.md")

# A commit hash: 7 to 40 hex digits, with at least one digit and one letter.
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")


def _benchmark_files() -> list[Path]:
    return [path.relative_to(BENCHMARKS) for path in _committed_files() if path.is_relative_to(BENCHMARKS)]


def _imported(path: Path) -> set[str]:
    """Top-level names of every module ``path`` imports (absolute imports, at any depth of the code)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_library_has_no_provenance_module_and_never_imports_benchmarks() -> None:
    """Failure guarded: benchmark machinery shipped in the library, or the library depending on a folder that
    is not installed with it."""
    assert not (ROOT / "st_debias" / "provenance.py").exists()
    assert importlib.util.find_spec("st_debias.provenance") is None
    offenders = [
        str(path.relative_to(ROOT)) for path in (ROOT / "st_debias").rglob("*.py") if "benchmarks" in _imported(path)
    ]
    assert not offenders, f"st_debias modules importing benchmarks: {offenders}"


def test_benchmarks_never_import_tests() -> None:
    """Failure guarded: a benchmark that runs only from a checkout with the test suite on ``sys.path``."""
    offenders = [str(p) for p in _benchmark_files() if p.suffix == ".py" and "tests" in _imported(BENCHMARKS / p)]
    offenders += [
        str(p)
        for p in _benchmark_files()
        if p.suffix == ".sh" and re.search(r"\b(?:from|import) tests\b", (BENCHMARKS / p).read_text(encoding="utf-8"))
    ]
    assert not offenders, f"benchmark files importing tests: {offenders}"


def test_benchmarks_write_files_through_the_library() -> None:
    """Failure guarded: a benchmark script with its own copy of the atomic write (a temporary file, then a
    rename) instead of ``st_debias.files``, which the harness's ``write_stamped_json`` uses too."""
    markers = ("os.replace(", "os.rename(", "mkstemp(", "NamedTemporaryFile(", "mkdtemp(")
    offenders = [
        f"{p}: {marker}"
        for p in _benchmark_files()
        if p.suffix == ".py"
        for marker in markers
        if marker in (BENCHMARKS / p).read_text(encoding="utf-8")
    ]
    assert not offenders, f"use st_debias.files (atomic_write_text, atomic_path, staged_folder): {offenders}"


def test_the_top_level_holds_only_the_index_the_package_files_and_study_folders() -> None:
    """Failure guarded: scripts, configs or results at the top of ``benchmarks/`` instead of in their study."""
    top = sorted(str(p) for p in _benchmark_files() if len(p.parts) == 1)
    assert top == ["README.md", "__init__.py", "pyproject.toml"], f"move these into a study folder: {top}"


def test_every_folder_with_python_is_a_package_of_the_lab() -> None:
    """Failure guarded: a study folder missing from ``benchmarks/pyproject.toml`` (its modules then import from a
    checkout's working directory only), or one without ``__init__.py``."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((BENCHMARKS / "pyproject.toml").read_text(encoding="utf-8"))
    folders = {p.parent for p in _benchmark_files() if p.suffix == ".py"}
    wanted = {".".join(("benchmarks", *folder.parts)) for folder in folders}
    assert wanted == set(config["tool"]["setuptools"]["packages"])
    missing = sorted(str(folder) for folder in folders if not (BENCHMARKS / folder / "__init__.py").is_file())
    assert not missing, f"folders without an __init__.py: {missing}"


def test_the_lab_entry_points_name_what_exists() -> None:
    """Each loss, ``data.mix`` source and recipe extension the lab declares resolves to a class or source of that
    module, never to a name st_debias has its own entry for."""
    from st_debias.recipes.extensions import RECIPE_EXTENSIONS
    from st_debias.recipes.losses import LOSSES
    from st_debias.recipes.mix_sources import MIX_SOURCES

    tomllib = pytest.importorskip("tomllib")
    points = tomllib.loads((BENCHMARKS / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    assert set(points) == {"st_debias.losses", "st_debias.mix_sources", "st_debias.recipe_extensions"}
    for group, registry in (
        ("st_debias.losses", LOSSES), ("st_debias.mix_sources", MIX_SOURCES),
        ("st_debias.recipe_extensions", RECIPE_EXTENSIONS),
    ):
        assert points[group] and not set(points[group]) & set(registry.builtin())
        for name, value in points[group].items():
            module, _, attribute = value.partition(":")
            assert registry[name] is getattr(importlib.import_module(module), attribute), name


def _private_imports(source: str) -> list[str]:
    """The private names of st_debias or of a lab module that ``source`` imports, as ``line: name``: a module path
    with a part that starts with ``_`` (``st_debias.losses._base``) or an imported name that does."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules, names = [alias.name for alias in node.names], []
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules, names = [node.module], [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            if module.split(".")[0] not in {"st_debias", "benchmarks"}:
                continue
            if any(part.startswith("_") for part in module.split(".")):
                found.append(f"{node.lineno}: {module}")
            found += [f"{node.lineno}: {module}.{name}" for name in names if name.startswith("_")]
    return found


def test_the_lab_imports_only_public_names() -> None:
    """Failure guarded: a lab script that breaks when the library renames a helper it never promised, such as
    ``LossOutput`` read from ``st_debias.losses._base``."""
    offenders = [
        f"benchmarks/{p}:{found}"
        for p in _benchmark_files()
        if p.suffix == ".py"
        for found in _private_imports((BENCHMARKS / p).read_text(encoding="utf-8"))
    ]
    assert not offenders, "import public names (or give the helper a public name where it lives):\n" + "\n".join(
        offenders
    )


def test_the_private_import_rule_catches_what_it_guards() -> None:
    source = (
        "import st_debias.losses._base\nfrom st_debias.evaluation.evaluate import _environment\n"
        "def f():\n    from benchmarks.compare.compare import score_metrics, _fmt\n"
        "import _thread\nfrom numpy import _core\nfrom st_debias.losses import MarginNegationLoss\n"
    )
    assert _private_imports(source) == [
        "1: st_debias.losses._base", "2: st_debias.evaluation.evaluate._environment", "4: benchmarks.compare.compare._fmt"
    ]


def test_no_lab_file_edits_the_import_path() -> None:
    """Failure guarded: a script that runs only when started from its own folder; the installed lab package is
    imported instead."""
    pattern = re.compile(r"sys\.path|syspath_prepend")
    offenders = [str(p) for p in _benchmark_files() if p.suffix in {".py", ".sh", ".md"} and pattern.search(
        (BENCHMARKS / p).read_text(encoding="utf-8"))]
    assert not offenders, f"import from the installed package (benchmarks.<study>.<module>) instead: {offenders}"


def test_every_study_folder_has_a_readme() -> None:
    folders = {p.parts[0] for p in _benchmark_files() if len(p.parts) > 1}
    assert {"compare", "selection", "harness"} <= folders
    missing = sorted(folder for folder in folders if not (BENCHMARKS / folder / "README.md").is_file())
    assert not missing, f"study folders without a README.md: {missing}"


def test_every_result_json_is_stamped_or_archived() -> None:
    """Failure guarded: a result file that cannot say which code made it, outside an archive that says so."""
    unstamped = []
    for relative in _benchmark_files():
        if relative.suffix != ".json" or ARCHIVE in relative.parts:
            continue
        data = json.loads((BENCHMARKS / relative).read_text(encoding="utf-8"))
        stamp = data.get("provenance") if isinstance(data, dict) else None
        if not isinstance(stamp, dict) or not {"commit", "dirty", "packages", "builders"} <= set(stamp):
            unstamped.append(str(relative))
    assert not unstamped, f"stamp these or move them to an {ARCHIVE}/ folder with a README: {unstamped}"


def test_every_archive_folder_says_what_it_holds() -> None:
    archives = {
        Path(*relative.parts[: relative.parts.index(ARCHIVE) + 1])
        for relative in _benchmark_files()
        if ARCHIVE in relative.parts
    }
    assert archives, "no archive folder found: the discovery above is broken"
    missing = sorted(str(folder) for folder in archives if not (BENCHMARKS / folder / "README.md").is_file())
    assert not missing, f"archive folders without a README.md: {missing}"


def test_index_and_decisions_cite_no_issue_numbers_hashes_or_dates() -> None:
    """Failure guarded: the lab notebook's "Issue 10" sections, worktree hashes and dates in the pages written
    for users; the decisions page missing from the site."""
    assert "decisions.md" in _nav_pages()
    offenders = []
    for page in INDEX_PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for pattern in (ISSUE_REFERENCE, COMMIT, DEVELOPMENT_DATE):
                if match := pattern.search(line):
                    offenders.append(f"{page.relative_to(ROOT)}:{number}: {match.group()!r}")
    assert not offenders, "\n".join(offenders)


def test_study_readmes_cite_no_issue_numbers() -> None:
    readmes = [p for p in _benchmark_files() if p.name == "README.md"]
    offenders = [
        f"{p}:{number}: {match.group()!r}"
        for p in readmes
        for number, line in enumerate((BENCHMARKS / p).read_text(encoding="utf-8").splitlines(), 1)
        if (match := ISSUE_REFERENCE.search(line))
    ]
    assert not offenders, "\n".join(offenders)


def test_the_commit_pattern_catches_what_it_guards() -> None:
    assert COMMIT.search("at commit 2d8b744") and COMMIT.search("0ee867d8d21de2333157958e6d6c4dad39acba99")
    assert not COMMIT.search("decided") and not COMMIT.search("1234567") and not COMMIT.search("2,018.9")


def test_each_study_has_one_short_index_row() -> None:
    """Failure guarded: an index row that grew into the study's README (one was ~700 words). The question and the
    headline figures of each study fit in 60 words; the study README holds the rest."""
    rows = [line for line in (BENCHMARKS / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    assert len(rows) >= 10, "found too few index rows: the discovery above is broken"
    studies = [row.split("|")[1].strip().strip("`").rstrip("/") for row in rows]
    assert len(studies) == len(set(studies)), "a study with two index rows"
    long = {study: len(" ".join(row.split("|")[2:4]).split()) for study, row in zip(studies, rows, strict=True)}
    assert not {study: words for study, words in long.items() if words > 60}, long


def test_no_readme_under_benchmarks_is_over_400_lines() -> None:
    """Failure guarded: a study README that grew into a lab notebook (one reached 2,466 lines). A study answers
    one question; its tables come from its result files and history shrinks to what a newcomer needs."""
    readmes = [p for p in _benchmark_files() if p.name == "README.md"]
    assert len(readmes) >= 10, "found too few READMEs: the discovery above is broken"
    long = {str(p): n for p in readmes if (n := len((BENCHMARKS / p).read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"split these by question (at most 400 lines, ~300 wanted): {long}"


def _table_reports() -> list[Path]:
    """The study scripts that write their README's tables through ``benchmarks.harness.tables``."""
    return sorted(
        BENCHMARKS / p
        for p in _benchmark_files()
        if p.name == "report.py" and "benchmarks.harness.tables" in (BENCHMARKS / p).read_text(encoding="utf-8")
    )


@pytest.mark.parametrize("report", _table_reports(), ids=lambda p: p.parent.name)
def test_generated_readme_tables_are_up_to_date(report: Path) -> None:
    """Failure guarded: a README table typed by hand, or left behind when a result file moved or changed:
    regenerating the tables from the committed result files reproduces the README."""
    from benchmarks.harness.tables import render

    module = importlib.import_module(f"benchmarks.{report.parent.name}.report")
    readme = (report.parent / "README.md").read_text(encoding="utf-8")
    assert render(readme, module.tables()) == readme, f"run python {report.relative_to(ROOT)}"


def test_the_table_markers_are_found() -> None:
    assert len(_table_reports()) >= 7, "found too few report.py: the discovery above is broken"
