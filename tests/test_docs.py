"""The user documentation in ``docs/`` ships with the package: it must cover the public API, cite files
that exist, and the repository must not point users at files they do not have."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

import st_debias.losses
from tests.test_docs_code import _table_rows

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: Public loss -> its page. A new loss fails ``test_every_public_loss_has_a_docs_page`` until it is added.
LOSS_PAGES = {
    "FocalInfoNCE": "losses/focal_infonce.md",
    "InstanceWeightedMNRL": "losses/instance_weighted_mnrl.md",
    "DebiasInfoNCE": "losses/debias_infonce.md",
    "MarginNegationLoss": "losses/margin_negation.md",
    "RecallRegularizer": "losses/recall_regularizer.md",
    "SimilarityPreservation": "losses/similarity_preservation.md",
}

#: Public builder or candidate generator -> its page.
BUILDER_PAGES = {
    "IPWBuilder": "builders/ipw.md",
    "MinimalPairBuilder": "builders/minimal_pairs.md",
    "OssCSEBuilder": "builders/osscse.md",
    "Negator": "builders/osscse.md",
    "NegatedAntonymGenerator": "builders/osscse.md",
    "SyntacticParaphraser": "builders/paraphrase.md",
    "ParaphrasePairBuilder": "builders/paraphrase.md",
    "WordDeletion": "builders/paraphrase.md",
    "FrequentWordInsertion": "builders/paraphrase.md",
    "WordRepetition": "builders/paraphrase.md",
    "WordNetSynonym": "builders/paraphrase.md",
    "EditChain": "builders/paraphrase.md",
    "UnionGenerator": "builders/paraphrase.md",
    "CorpusNeighbourGenerator": "builders/paraphrase.md",
    "Seq2SeqGenerator": "builders/paraphrase.md",
}

# Built so that this file does not match its own patterns.
DEVELOPER_SPEC = re.compile("METHODS" + r"(?:\.md|\s*§)")
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:" + "work|root" + r")/")
#: In a recorded result, also the home and temporary folders of the machine that made it.
RESULT_MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:" + "work|root|home|tmp" + r")/")
RESULT_SUFFIXES = {".json", ".jsonl", ".md", ".csv", ".log", ".txt"}
# "issue 12", "Issues 11, 12", "(#12)"; not "#1 String", "#1f77b4", "page.md#12-title" nor a Markdown heading.
ISSUE_REFERENCE = re.compile("[Ii]" + r"ssues?\s+#?\d+\b|(?:^|(?<=[\s(\[,;]))#\d{1,5}\b(?![\w-])", flags=re.M)
# A day of development ("a regression since 2026-11-22"); dates inside `code` (file names) are not prose.
DEVELOPMENT_DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")


def _public_losses() -> list[str]:
    return [name for name in st_debias.losses.__all__ if not name.startswith("Cached")]


def _nav_pages() -> set[str]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, str):
            pages.add(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config["nav"])
    return pages


def _committed_files() -> list[Path]:
    """Files git tracks or would track (not ignored); every file under ROOT when git is unavailable."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8")
        return [ROOT / name for name in listed.split("\0") if name and (ROOT / name).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {
            ".git",
            ".venv",
            "build",
            "dist",
            "site",
            "outputs",
            "__pycache__",
            ".pytest_cache",
            ".ruff_cache",
        }
        files = []
        for folder, subfolders, names in os.walk(ROOT):
            subfolders[:] = [d for d in subfolders if d not in skip and not d.endswith(".egg-info")]
            files += [Path(folder) / name for name in names]
        return files


def _is_recorded_output(relative: Path) -> bool:
    """Benchmark result files record the paths they were run with; they are outputs, not documentation."""
    return relative.parts[0] == "benchmarks" and "results" in relative.parts


def _text(path: Path) -> str | None:
    """A file's text, or None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_reference_to_developer_spec_or_machine_paths():
    """Failure guarded: a committed text file points users at the developers' spec (which users do not
    have) or at an absolute path of the development machine instead of a repo path or an env var."""
    offenders = []
    for path in _committed_files():
        relative = path.relative_to(ROOT)
        if _is_recorded_output(relative):
            continue
        text = _text(path)
        if text is None:
            continue  # binary (plots)
        for number, line in enumerate(text.splitlines(), 1):
            if DEVELOPER_SPEC.search(line) or MACHINE_PATH.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()[:120]}")
    assert not offenders, "Point to docs/ or use a relative path / env var instead:\n" + "\n".join(offenders)


def test_result_files_name_no_machine_paths():
    """Failure guarded: a committed benchmark result records an absolute path of the machine that made it (a
    checkout, a home or a temporary folder) instead of a path relative to the repository."""
    offenders = []
    for path in _committed_files():
        relative = path.relative_to(ROOT)
        if not _is_recorded_output(relative) or path.suffix not in RESULT_SUFFIXES:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            match = RESULT_MACHINE_PATH.search(line)
            if match:
                offenders.append(f"{relative}:{number}: …{line[max(0, match.start() - 40) : match.end() + 40]}…")
    assert not offenders, "Write paths relative to the repository (e.g. outputs/...):\n" + "\n".join(offenders)


def test_the_path_checks_catch_what_they_guard():
    """Failure guarded: the patterns above silently stop matching (the check would then always pass)."""
    assert DEVELOPER_SPEC.search("see ../shared/" + "METHODS" + ".md") and DEVELOPER_SPEC.search(
        "METHODS" + " §8"
    )
    assert MACHINE_PATH.search("export ST_DEBIAS_DATA=/" + "work/shared/data")
    assert MACHINE_PATH.search("cache in /" + "root/.cache")
    assert not MACHINE_PATH.search("docs/work/page.md") and not MACHINE_PATH.search("$PWD/../shared/data")
    assert RESULT_MACHINE_PATH.search('"model": "/' + 'tmp/old/model"') and RESULT_MACHINE_PATH.search("/" + "home/u/x")
    assert not RESULT_MACHINE_PATH.search('"model": "outputs/compare/simcse-seed42/model"')
    assert not RESULT_MACHINE_PATH.search("$TMPDIR/old/model") and not RESULT_MACHINE_PATH.search("data/tmp/x")


def test_no_issue_numbers_or_development_dates_in_shipped_files_and_docs():
    """Failure guarded: a shipped file or a docs page tells the project's history ("issue 13", "(#12)",
    "a regression since 2026-11-22") instead of what a user needs; that belongs to the commit log."""
    shipped = [path for path in sorted((ROOT / "st_debias").rglob("*")) if path.is_file()]
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    offenders = []
    for path in shipped + pages:
        text = _text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            prose = re.sub(r"`[^`]*`", "", line) if path in pages else ""
            if ISSUE_REFERENCE.search(line) or DEVELOPMENT_DATE.search(prose):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not offenders, "Say what it means for the user, without issue numbers or dates:\n" + "\n".join(offenders)


def test_the_history_checks_catch_what_they_guard():
    """Failure guarded: the patterns above silently stop matching, or flag what is not an issue reference."""
    for text in ["fixed in " + "issue 13", "Issue" + "s 11, 12", "(" + "#12)", "see " + "#7."]:
        assert ISSUE_REFERENCE.search(text), text
    for text in ['row["#1 String"]', "color: #1f77b4", "# 1. Heading", "## Recipes", "page.md#12-title", "a&#8212;b"]:
        assert not ISSUE_REFERENCE.search(text), text
    assert DEVELOPMENT_DATE.search("since " + "2026-11-22") and not DEVELOPMENT_DATE.search("(Hou & Li, 2023)")


def test_shipped_recipes_open_with_a_short_description_and_no_history():
    """Failure guarded: a recipe YAML grows a changelog in its comments; it opens with at most two comment
    lines saying what the recipe is, and its history lives in docs/recipes.md ("Changes between versions")."""
    from st_debias.recipes.config import recipe_dir

    files = sorted(recipe_dir().glob("*.yaml"))
    assert files, "no packaged recipe found"
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        header = []
        for line in lines:
            if not line.startswith("#"):
                break
            header.append(line)
        assert 1 <= len(header) <= 2, f"{path.name}: open with a description of one or two comment lines"
        later = [line for line in lines[len(header) :] if line.lstrip().startswith("#")]
        assert not later, f"{path.name}: comments after the description: {later}"
        assert not re.search(r"\b(?:v\d+|[Vv]ersions? \d+)\b", " ".join(header)), f"{path.name}: history in the header"
    assert "### Changes between versions" in (DOCS / "recipes.md").read_text(encoding="utf-8")


def test_method_table_lists_every_builder_and_loss():
    """Failure guarded: docs/index.md's table of methods left out MinimalPairBuilder (and
    SimilarityPreservation), so the home page hid st_debias's own methods."""
    import st_debias.data

    rows = _table_rows((DOCS / "index.md").read_text(encoding="utf-8"), "Why")
    listed = set(re.findall(r"`(\w+)`", " ".join(cells[-1] for cells in rows)))
    builders = {
        name for name in st_debias.data.__all__ if name.endswith("Builder") and isinstance(getattr(st_debias.data, name), type)
    }
    assert len(builders) >= 3, "found too few builders: the discovery above is broken"
    missing = sorted((builders | set(_public_losses())) - listed)
    assert not missing, f"missing from the method table of docs/index.md: {missing}"


@pytest.mark.parametrize("name", _public_losses())
def test_every_public_loss_has_a_docs_page(name: str):
    """Failure guarded: a loss is exported without a documentation page, or its page is not in the site nav."""
    assert name in LOSS_PAGES, (
        f"{name} is public but has no docs page: add docs/losses/<name>.md and LOSS_PAGES"
    )
    page = DOCS / LOSS_PAGES[name]
    assert page.is_file(), f"{page} is missing"
    assert f"# {name}" in page.read_text(encoding="utf-8"), f"{page} does not have {name} as its title"
    assert LOSS_PAGES[name] in _nav_pages(), f"{LOSS_PAGES[name]} is not in the nav of mkdocs.yml"


def test_every_public_builder_and_generator_is_mapped_to_a_page():
    """Failure guarded: a builder or paraphrase generator is exported from st_debias.data without docs."""
    import st_debias.data
    from st_debias.data.generators import CandidateGenerator

    public = set()
    for name in st_debias.data.__all__:
        value = getattr(st_debias.data, name)
        if isinstance(value, type) and (
            name.endswith("Builder") or name == "Negator" or issubclass(value, CandidateGenerator)
        ):
            public.add(name)
    public.discard("CandidateGenerator")  # the interface, documented on the generators page
    assert public, "found no builder at all: the discovery above is broken"
    assert not public - set(BUILDER_PAGES), f"undocumented: {sorted(public - set(BUILDER_PAGES))}"


@pytest.mark.parametrize("name", sorted(BUILDER_PAGES))
def test_every_builder_is_described_on_its_page(name: str):
    """Failure guarded: a builder's page is removed, renamed or left out of the site nav."""
    page = DOCS / BUILDER_PAGES[name]
    assert page.is_file(), f"{page} is missing"
    assert name in page.read_text(encoding="utf-8"), f"{page} does not mention {name}"
    assert BUILDER_PAGES[name] in _nav_pages(), f"{BUILDER_PAGES[name]} is not in the nav of mkdocs.yml"


def test_recipes_page_shows_each_packaged_recipe_as_shipped():
    """Failure guarded: a packaged recipe changes (or is added) and docs/recipes.md keeps showing the old YAML."""
    from st_debias.recipes.config import available_recipes, recipe_dir

    page = (DOCS / "recipes.md").read_text(encoding="utf-8")
    names = available_recipes()
    assert names, "no packaged recipe found"
    for name in names:
        shipped = (recipe_dir() / f"{name}.yaml").read_text(encoding="utf-8").strip()
        assert f"## {name}\n" in page, f"docs/recipes.md has no section for recipe {name!r}"
        assert f"```yaml\n{shipped}\n```" in page, f"docs/recipes.md does not show {name}.yaml as shipped"


def test_result_files_cited_by_the_docs_exist():
    """Failure guarded: a figure in the docs cites a results file or script that was moved or deleted."""
    cited = set()
    for page in DOCS.rglob("*.md"):
        for path in re.findall(
            r"`((?:benchmarks|st_debias|tests)/[^`\s]+)`", page.read_text(encoding="utf-8")
        ):
            if not any(mark in path for mark in "<[*…"):
                cited.add(path.rstrip("/"))
    assert cited, "the docs cite no file at all: the pattern above is broken"
    missing = sorted(path for path in cited if not (ROOT / path).exists())
    assert not missing, f"cited in docs/ but missing from the repository: {missing}"


def _summary_mean(figures: dict, column: str) -> float:
    """A compare.py ``summary.json`` figure: the mean over seeds for a recipe, the value for the start model."""
    value = figures[column]
    return value["mean"] if isinstance(value, dict) else value


def _shown_as_rounded(shown: list[str], values: list[float]) -> bool:
    """Whether each figure as printed in the docs is its value rounded to the decimals printed."""
    decimals = [len(text.split(".")[1]) for text in shown]
    return [float(text) for text in shown] == [round(v, d) for v, d in zip(values, decimals, strict=True)]


def test_recipes_page_table_is_the_committed_comparison():
    """docs/recipes.md's table of the packaged recipes is read from the committed 100-step comparison
    (``benchmarks/compare/results/100-steps/summary.json``), not typed: each row, its seed count and every
    figure, rounded as shown."""
    import json

    summary = json.loads((ROOT / "benchmarks/compare/results/100-steps/summary.json").read_text(encoding="utf-8"))
    page = (DOCS / "recipes.md").read_text(encoding="utf-8")
    section = page.split("## How the figures were measured", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith(("| `", "| start"))]
    columns = ("STS-7 avg", "STS-B Cont", "STS-B Oppn", "CANNOT neg. cosine", "word-order cosine",
               "neg. meaning (ii) ↑", "neg. meaning (iii) polarity cluster ↓", "transfer avg")
    expected = [("start", summary["start"])] + list(summary["recipes"].items())
    assert len(rows) == len(expected)
    for row, (name, figures) in zip(rows, expected, strict=True):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[0].strip("`").startswith(name)
        means = [_summary_mean(figures, c) for c in columns]
        assert _shown_as_rounded([cell.split(" ± ")[0] for cell in cells[2:]], means), name
        if name != "start":
            assert int(cells[1]) == figures["STS-7 avg"]["n"]


#: docs/recipes.md's all-mpnet-base-v2 table: each row's label and the summary columns its cell shows.
MPNET_ROWS = {
    "STS-7 average": ("STS-7 avg",),
    "STS-B Oppn": ("STS-B Oppn",),
    "CANNOT negation cosine": ("CANNOT neg. cosine",),
    "word-order cosine": ("word-order cosine",),
    "negation meaning": ("neg. meaning (i) ↑", "neg. meaning (ii) ↑", "neg. meaning (iii) polarity cluster ↓"),
}


def test_recipes_page_mpnet_table_is_the_committed_comparison():
    """The st-debias section's table for all-mpnet-base-v2 is read from the committed comparison
    (``benchmarks/mpnet/results/sts7/summary.json``), not typed: start, simcse and st-debias, every figure."""
    import json

    results = ROOT / "benchmarks/mpnet/results/sts7"
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    trained = json.loads((results / "st-debias-seed42.json").read_text(encoding="utf-8"))
    from st_debias.recipes import load_recipe

    shipped = load_recipe("st-debias").version
    assert trained["after"]["recipe"]["version"] == shipped, "the mpnet comparison is of another st-debias version"
    page = (DOCS / "recipes.md").read_text(encoding="utf-8")
    section = page.split("**Another start model.**", 1)[1].split("\n\n###", 1)[0]
    lines = [line.strip() for line in section.splitlines() if line.strip().startswith("| ")]
    assert lines[0] == f"| figure | start | `simcse` | `st-debias` v{shipped} |"
    columns = [summary["start"], summary["recipes"]["simcse"], summary["recipes"]["st-debias"]]
    seen: list[str] = []
    for line in lines[1:]:  # the separator row does not start with "| "
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        label = next(name for name in MPNET_ROWS if cells[0].startswith(name))
        for cell, figures in zip(cells[1:], columns, strict=True):
            shown = [value.strip() for value in cell.split(" / ")]
            assert all(len(value.split(".")[1]) >= 2 for value in shown), (label, cell)
            assert _shown_as_rounded(shown, [_summary_mean(figures, c) for c in MPNET_ROWS[label]]), label
        seen.append(label)
    assert seen == list(MPNET_ROWS)


#: The README main-job table's rows and the before/after lines of the job's output each figure comes from.
MAIN_JOB_ROWS = {
    "STS-B test / SICK-R": ("STSBenchmark", "SICK-R"),
    "STS-B Cont / Oppn split": ("STSBenchmark Cont", "STSBenchmark Oppn"),
    "Oppn mean cosine": (
        "STSBenchmark Oppn: high overlap, low score, mean cosine",
        "STSBenchmark Oppn: low overlap, high score, mean cosine",
    ),
    "CANNOT negation cosine": ("negation mean cosine",),
    "word order": ("word order mean cosine",),
    "negation meaning": ("negation meaning (ii)", "negation meaning (iii)"),
    "negation meaning without the negations' common direction": tuple(
        f"negation meaning ({figure}) without the negations' common direction" for figure in ("i", "ii", "iii")
    ),
    "negation meaning, prefixed antonyms": (
        "negation meaning (i), antonyms like able/unable", "negation meaning (ii), antonyms like able/unable",
    ),
    "negation meaning, other-word antonyms": (
        "negation meaning (i), antonyms like large/small", "negation meaning (ii), antonyms like large/small",
    ),
}


def test_readme_main_job_table_is_the_committed_run():
    """The README's before/after table is what the timed main job printed
    (``benchmarks/quickstart/results/main_job_2core.json``), not typed: every figure of every row."""
    import json

    run = json.loads((ROOT / "benchmarks/quickstart/results/main_job_2core.json").read_text(encoding="utf-8"))
    printed: dict[str, tuple[str, str]] = {}
    for line in run["output_tail"]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 4:
            label = re.sub(r" \(n=\d+\)|[↓↑]", "", cells[0]).strip()
            printed[label.split(":")[0] if label.startswith("negation meaning") else label] = (cells[1], cells[2])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line.strip() for line in readme.splitlines() if line.strip().startswith("| ")]
    seen = set()
    for label, metrics in MAIN_JOB_ROWS.items():
        row = next(line for line in rows if line.startswith(f"| {label}"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for column, cell in ((1, cells[1]), (2, cells[2])):
            shown = [value.strip() for value in cell.split(" / ")]
            assert shown == [printed[metric][column - 1] for metric in metrics], (label, column)
        seen.add(label)
    assert seen == set(MAIN_JOB_ROWS)
