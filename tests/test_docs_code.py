"""Docs that cannot disagree with the code: the README's Python example runs as written, docs/cli.md
lists exactly the options of the argparse parsers, and every Python name the README's module table and the
docs pages give imports."""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


#: Every page whose Python examples a reader may paste: the README and each docs page.
EXAMPLE_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _run_examples(tmp_path: Path, which: str) -> str:
    """Run the examples of :data:`EXAMPLE_PAGES` (``FAST`` or ``SLOW`` pass) offline, from an empty folder."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),  # a fresh machine: nothing downloaded from the hub before
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "docs_examples.py"), which, *map(str, EXAMPLE_PAGES)],
        cwd=work, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    return done.stdout


def test_every_docs_example_runs_offline(tmp_path: Path) -> None:
    """Six docs pages loaded SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2"), which fails under
    the setup's HF_HUB_OFFLINE=1; only the README's example was run. Every page's examples now run as written."""
    output = _run_examples(tmp_path, "FAST")
    ran = [line for line in output.splitlines() if line.startswith("ran ")]
    assert any("README.md" in line for line in ran), "the README's example did not run"
    assert len(ran) >= 15, output


@pytest.mark.slow
def test_slow_docs_examples_run_offline(tmp_path: Path) -> None:
    """The examples marked slow (a recipe trained for 200 steps, the transfer tasks) run as written too."""
    assert "ran " in _run_examples(tmp_path, "SLOW")


def test_examples_marked_out_of_the_fast_pass_are_few() -> None:
    """A marker is a way out of the test: each page may use one only for what truly cannot run in seconds
    offline, so the markers stay few and each is one of the known kinds."""
    from tests.docs_examples import examples, skip_reason

    marked = [(page.name, line, marker) for page in EXAMPLE_PAGES for line, marker, _ in examples(page) if marker]
    assert len(marked) <= 6, marked
    for *_, marker in marked:
        skip_reason(marker, slow=True)  # raises on an unknown marker


def _parser_options(command: str) -> set[str]:
    """Every long option of ``st-debias <command>``, as argparse defines it (``--help`` aside)."""
    from st_debias.cli import build_parser

    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {o for action in sub._actions for o in action.option_strings if o.startswith("--")} - {"--help"}


def _doc_section(command: str) -> str:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    match = re.search(rf"^## st-debias {command}\n(.*?)(?=^## |\Z)", page, flags=re.S | re.M)
    assert match, f"docs/cli.md has no section for st-debias {command}"
    return match.group(1)


@pytest.mark.parametrize("command", ["train", "eval", "build"])
def test_cli_page_lists_exactly_the_parsers_options(command: str) -> None:
    """docs/cli.md omitted --mteb-tasks, --quick-eval, --overwrite, --word-order-lines, --start-as-candidate
    and --generator, which the parsers have."""
    section = _doc_section(command)
    documented = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", section))
    options = _parser_options(command)
    assert sorted(options - documented) == [], f"st-debias {command}: options missing from docs/cli.md"
    assert sorted(documented - options) == [], f"st-debias {command}: docs/cli.md names options the parser lacks"


def _directives(path: Path) -> set[str]:
    """The objects a page renders with mkdocstrings (``::: dotted.name`` lines)."""
    return set(re.findall(r"^::: ([\w.]+)$", path.read_text(encoding="utf-8"), flags=re.M))


def _api_entries(page: str) -> set[str]:
    return _directives(ROOT / "docs" / "api" / page)


def _resolve(dotted: str) -> object:
    """Import ``dotted`` as a module, or as attributes of its longest importable prefix (``pkg.mod.Class``).

    A class or function must be defined in that module or below it (a package exporting its submodules'
    names): one that only answers there through a moved-name shim is reported where it lives now, since
    mkdocstrings cannot render it at the old path.
    """
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            value = importlib.import_module(module_name)
        except ModuleNotFoundError:
            continue
        for index, name in enumerate(parts[cut:]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                value = getattr(value, name)
            home = getattr(value, "__module__", None)
            defined_here = home == module_name or str(home).startswith(module_name + ".")
            if index == 0 and (inspect.isclass(value) or inspect.isfunction(value)) and not defined_here:
                raise AttributeError(f"{dotted} lives in {home}")
        return value
    raise ModuleNotFoundError(dotted)


def _table_rows(text: str, heading: str) -> list[list[str]]:
    """The cells of each body row of the first table under ``heading`` (a Markdown heading line)."""
    section = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", text, flags=re.S | re.M)
    assert section, f"no section {heading!r}"
    lines = [line for line in section.group(1).splitlines() if line.startswith("|")]
    assert len(lines) > 2, f"section {heading!r} has no table"
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines[2:]]


#: The tables that map each ``st_debias`` module to what it holds: (file, heading).
MODULE_TABLES = [("README.md", "What is inside"), ("docs/index.md", "Layout of the package")]
_IDENTIFIER = re.compile(r"([A-Za-z_]\w*)(?:\(.*\))?")


def _module_table_names() -> list[tuple[str, str, str]]:
    """(where, module, name) for every backticked Python name in a module row of the module tables."""
    found = []
    for file, heading in MODULE_TABLES:
        for cells in _table_rows((ROOT / file).read_text(encoding="utf-8"), heading):
            module = re.fullmatch(r"`(st_debias(?:\.\w+)*)`", cells[0])
            if module:
                found += [(f"{file}: {module.group(1)}", module.group(1), name) for name in re.findall(r"`([^`]+)`", cells[1])]
    return found


def _is_named_in(module_name: str, token: str) -> bool:
    """Whether ``token`` (a name in ``module_name``'s row) is what the row says: a dotted ``st_debias.`` path
    that imports, or a bare name that is an attribute of the module, a method, attribute or constructor
    argument of a class it exports, or a packaged recipe."""
    from st_debias.recipes.config import available_recipes

    if token.startswith("st_debias."):
        _resolve(token.split("(", 1)[0])
        return True
    match = _IDENTIFIER.fullmatch(token)
    if not match:
        return True  # not a Python name: a file name, a command line, a keyword argument
    name = match.group(1)
    module = importlib.import_module(module_name)
    if hasattr(module, name) or name in available_recipes():
        return True
    classes = [getattr(module, n) for n in getattr(module, "__all__", [])]
    return any(
        hasattr(cls, name) or name in inspect.signature(cls).parameters for cls in classes if isinstance(cls, type)
    )


def test_module_tables_name_only_what_imports() -> None:
    """The README's module table named st_debias.data.attach_guide_embeddings and
    st_debias.recipes.GradientShareCallback, and st_debias.core's all_gather: none of them imports."""
    names = _module_table_names()
    assert len({where for where, _, _ in names}) >= 5, "the module tables were not found: the parsing is broken"
    wrong = []
    for where, module, token in names:
        try:
            if not _is_named_in(module, token):
                wrong.append(f"{where}: `{token}`")
        except (ImportError, AttributeError) as error:
            wrong.append(f"{where}: `{token}` ({error})")
    assert not wrong, "named in a module table but not importable from there:\n" + "\n".join(wrong)


def _docs_dotted_names() -> list[tuple[str, str]]:
    """(page, name) for every mkdocstrings directive and backticked ``st_debias.`` name in docs/ and the README."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        where = str(page.relative_to(ROOT))
        found += [(where, name) for name in sorted(_directives(page))]
        text = page.read_text(encoding="utf-8")
        found += [(where, name) for name in sorted(set(re.findall(r"`(st_debias(?:\.\w+)+)(?:\([^`]*\))?`", text)))]
    return found


def test_every_dotted_name_in_the_docs_imports() -> None:
    """A page that names a moved or renamed object (``st_debias.x.y``) fails here, not in a user's import."""
    names = _docs_dotted_names()
    assert len(names) > 50, "found too few names: the patterns above are broken"
    wrong = []
    for where, name in names:
        try:
            _resolve(name)
        except (ImportError, AttributeError) as error:
            wrong.append(f"{where}: {name} ({error})")
    assert not wrong, "\n".join(wrong)


def test_module_tables_list_every_loss() -> None:
    """docs/index.md gave "the five losses" while st_debias.losses exported eleven: each module table's
    losses row names every exported loss instead of a count."""
    import st_debias.losses

    for file, heading in MODULE_TABLES:
        rows = {cells[0]: cells[1] for cells in _table_rows((ROOT / file).read_text(encoding="utf-8"), heading)}
        named = set(re.findall(r"`([A-Za-z_]\w*)", rows["`st_debias.losses`"]))
        assert set(st_debias.losses.__all__) - named == set(), f"{file}: losses missing from the module table"


def test_api_reference_is_generated_for_every_public_name() -> None:
    """The reference is mkdocstrings' rendering of the docstrings (built strict in CI), never a copied table;
    a public name missing from it fails here."""
    import yaml

    import st_debias.core
    import st_debias.data
    import st_debias.evaluation
    import st_debias.losses
    import st_debias.recipes

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert any("mkdocstrings" in (p if isinstance(p, str) else next(iter(p))) for p in config["plugins"])
    assert {f"st_debias.losses.{n}" for n in st_debias.losses.__all__} <= _api_entries("losses.md")
    assert {f"{m}.{n}" for n, m in st_debias.data._EXPORTS.items()} <= _api_entries("data.md")
    assert {f"{m}.{n}" for n, m in st_debias.recipes._EXPORTS.items()} <= _api_entries("recipes.md")
    core_functions = {n: getattr(st_debias.core, n) for n in st_debias.core.__all__}
    assert {f"{f.__module__}.{n}" for n, f in core_functions.items() if callable(f) and f.__module__.startswith("st_debias")} \
        <= _api_entries("core.md")
    functions = [n for n in st_debias.evaluation.__all__ if callable(getattr(st_debias.evaluation, n))]
    documented = {entry.rsplit(".", 1)[1] for entry in _api_entries("evaluation.md")}
    assert set(functions) - documented == set()


def test_loss_pages_carry_no_hand_written_parameter_tables() -> None:
    """docs/losses/margin_negation.md's copied table lacked return_parts and similarity_fct."""
    for page in sorted((ROOT / "docs" / "losses").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"^\| argument \|", text, flags=re.M), page.name
        if "## Parameters" in text:
            assert "../api/losses.md#st_debias.losses." in text.split("## Parameters", 1)[1], page.name


def test_losses_overview_lists_every_loss_and_keeps_its_temperature_promise() -> None:
    """The overview promised `loss.temperature` of every loss (7 classes lacked it) and its table omitted
    SimilarityPreservation and the cached losses."""
    import inspect

    import st_debias.losses

    page = (ROOT / "docs" / "losses" / "index.md").read_text(encoding="utf-8")
    table = page.split("## Conventions", 1)[0]
    for name in st_debias.losses.__all__:
        assert f"[`{name}`]" in table, name
        cls = getattr(st_debias.losses, name)
        if "scale" in inspect.signature(cls).parameters or name.startswith("Cached"):
            inner = st_debias.losses.FocalInfoNCE(None, scale=10.0)
            loss = cls(None, inner) if name == "CachedLoss" else cls(None, scale=10.0)
            assert loss.temperature == pytest.approx(0.1), name
        else:
            assert "have none" in page and f"`{name}`" in page.split("**Temperature.**", 1)[1].split("\n- ", 1)[0]


def test_margin_negation_page_says_what_the_loss_returns() -> None:
    """The page said the loss returns a dict; it returns one tensor unless return_parts=True."""
    import torch

    from st_debias.losses import MarginNegationLoss

    embeddings = [torch.randn(3, 4, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    assert isinstance(MarginNegationLoss(None).compute_loss_from_embeddings(embeddings), torch.Tensor)
    page = (ROOT / "docs" / "losses" / "margin_negation.md").read_text(encoding="utf-8")
    assert "The loss returns a dict" not in page
    assert "returns one tensor" in page and "With `return_parts=True` it returns the\ndict" in page


def test_builder_pages_name_the_default_paraphraser() -> None:
    """docs/builders/osscse.md and paraphrase.md gave chained word edits as OssCSEBuilder's default."""
    from st_debias.data import OssCSEBuilder

    default = type(OssCSEBuilder().paraphrase_generators[0]).__name__
    osscse = (ROOT / "docs" / "builders" / "osscse.md").read_text(encoding="utf-8")
    row = next(line for line in osscse.splitlines() if line.startswith("| `paraphrase_generators`"))
    assert f"`[{default}]`" in row
    paraphrase = (ROOT / "docs" / "builders" / "paraphrase.md").read_text(encoding="utf-8")
    assert "is the default of `OssCSEBuilder`" not in paraphrase and f"its default is `{default}`" in paraphrase


_NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()
_STATED_COUNT = re.compile(
    r"\b(?:the|all|its|st_debias's)\s+(\d+|" + "|".join(_NUMBER_WORDS) + r")\s+(?:packaged\s+)?(losses|recipes)\b",
    flags=re.I,
)


def test_stated_counts_of_losses_and_recipes_come_from_the_code() -> None:
    """docs/index.md said "the five losses" long after more were exported: a count the docs state must be
    the code's (all exported losses, or the uncached ones; the packaged recipes)."""
    import st_debias.losses
    from st_debias.recipes.config import available_recipes

    losses = st_debias.losses.__all__
    allowed = {"losses": {len(losses), len([n for n in losses if not n.startswith("Cached")])}, "recipes": {len(available_recipes())}}
    assert _STATED_COUNT.search("the five losses") and _STATED_COUNT.search("all 6 packaged recipes")
    wrong = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for match in _STATED_COUNT.finditer(page.read_text(encoding="utf-8")):
            number, what = match.group(1).lower(), match.group(2).lower()
            count = int(number) if number.isdigit() else _NUMBER_WORDS.index(number)
            if count not in allowed[what]:
                wrong.append(f"{page.relative_to(ROOT)}: {match.group(0)!r} (the code has {sorted(allowed[what])})")
    assert not wrong, "\n".join(wrong)
