"""Bad inputs over every CLI verb (train, eval, build, recipes): a non-zero exit, a message naming the
file/line/argument, and no output or cache file left half-written. Plus the start-up contract of ``st-debias``.

Each row of :data:`CASES` names the failure it guards against. Rows marked ``xfail(strict=True)`` are
fixed on the data-validation branch; flip them when it is merged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from st_debias.cli import COMMANDS, main

REPO = Path(__file__).resolve().parents[1]
# Names a crash-safe write uses while it is under way: none may survive a failed command.
PARTIAL_MARKERS = (".tmp", ".partial", ".write-check-")


@dataclass
class Inputs:
    """Files a case can point at, created on demand under ``root``."""

    root: Path
    model: Path

    def file(self, name: str, content: str | bytes) -> Path:
        path = self.root / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path

    def blocker(self) -> Path:
        """A regular file, so ``blocker/out`` cannot be created."""
        return self.file("a-file", "not a folder")

    def corpus(self, lines: int = 40) -> Path:
        from tests.conftest import first_sentences

        return self.file("corpus.txt", "\n".join(first_sentences(lines)) + "\n")

    def model_without_tokenizer(self) -> Path:
        """A copy of the model folder without its tokenizer files (config and weights only)."""
        import shutil

        target = self.root / "no-tokenizer"
        shutil.copytree(self.model, target, ignore=shutil.ignore_patterns("tokenizer*", "vocab*", "special_tokens*"))
        return target

    def sts_data_dir(self, bad_line: str) -> Path:
        """A data folder of tiny STS files whose STS12 file holds ``bad_line`` as its line 3."""
        shared = Path(os.environ["ST_DEBIAS_DATA"]) / "sts"
        target = self.root / "data" / "sts"
        target.mkdir(parents=True)
        for source in shared.glob("*.jsonl"):
            with open(source, encoding="utf-8") as handle:
                head = [next(handle) for _ in range(12)]
            if source.name == "sts12.jsonl":
                head[2] = bad_line + "\n"
            (target / source.name).write_text("".join(head), encoding="utf-8")
        return target.parent


def _train(inputs: Inputs, *extra: str, output: Path | None = None) -> list[str]:
    return [
        "train", "--recipe", "simcse", "--model", str(inputs.model), "--steps", "2", "--batch-size", "8",
        "--max-seq-length", "16", "--output", str(output or inputs.root / "out"),
        "--cache-dir", str(inputs.root / "cache"), "--no-eval", *extra,
    ]  # fmt: skip


def _nan_score_line() -> str:
    return json.dumps({"sentence1": "A man plays.", "sentence2": "A man is playing.", "score": float("nan")})


@dataclass
class Case:
    argv: Callable[[Inputs], list[str]]
    message: Callable[[Inputs], list[str]]  # substrings the error output must contain
    code: int = 2
    refused_up_front: bool = False  # refused before any work: no --output folder at all (no run.json)


CASES = {
    # train
    "train-missing-corpus": Case(
        lambda i: _train(i, "--corpus", str(i.root / "missing.txt")),
        lambda i: [f"Corpus file {i.root / 'missing.txt'}"],
    ),
    "train-empty-corpus": Case(
        lambda i: _train(i, "--corpus", str(i.file("empty.txt", ""))),
        lambda i: [f"Corpus {i.root / 'empty.txt'} has no non-empty sentence"],
    ),
    "train-blank-lines-corpus": Case(
        lambda i: _train(i, "--corpus", str(i.file("blank.txt", "\n  \n\n"))),
        lambda i: [f"Corpus {i.root / 'blank.txt'} has no non-empty sentence"],
    ),
    "train-unknown-sts-task": Case(
        lambda i: _train(i, "--sts-tasks", "STSBenchmark,STS99"),
        lambda i: ["--sts-tasks 'STSBenchmark,STS99': choose from STS12"],
    ),
    "train-steps-zero": Case(
        lambda i: _train(i, "--steps", "0"), lambda i: ["training.steps must be > 0, got 0"]
    ),
    "train-batch-size-zero": Case(
        lambda i: _train(i, "--batch-size", "0"), lambda i: ["training.batch_size must be > 0, got 0"]
    ),
    "train-learning-rate-not-a-number": Case(
        lambda i: _train(i, "--learning-rate", "fast"),
        lambda i: ["--learning-rate", "invalid float value: 'fast'"],
    ),
    "train-fewer-rows-than-a-batch": Case(
        lambda i: _train(i, "--sentences", "5"),
        lambda i: ["built 5 training rows", "fewer than one batch of 8"],
    ),
    "train-unwritable-output": Case(
        lambda i: _train(i, output=i.blocker() / "out"),
        lambda i: [f"--output {i.root / 'a-file' / 'out'} is not writable"],
    ),
    "train-resume-without-a-run": Case(
        lambda i: _train(i, "--resume"), lambda i: [f"--resume: {i.root / 'out'} holds no run.json"]
    ),
    "train-unknown-recipe": Case(
        lambda i: [
            "train",
            "--recipe",
            str(i.file("nope.yaml", "name: nope\nversion: 1\ndata: {kind: magic}\n")),
        ],
        lambda i: [f"Recipe {i.root / 'nope.yaml'}: data.kind must be one of"],
    ),
    "train-corpus-with-a-nul-byte": Case(
        lambda i: _train(i, "--corpus", str(i.file("nul.txt", b"A sentence.\nAnother one.\nBad\x00line.\n"))),
        lambda i: [f"{i.root / 'nul.txt'}:3: holds a NUL byte at column 4"],
    ),
    "train-recipe-with-a-duplicate-key": Case(
        lambda i: [*_train(i), "--recipe", str(i.file("dup.yaml", (
            "name: dup\nversion: 1\ntraining:\n  steps: 10\n  batch_size: 8\n  steps: 30\n")))],
        lambda i: [f"Recipe {i.root / 'dup.yaml'}: not valid YAML: duplicate key 'steps' (first given on line 4)",
                   "line 6"],
        refused_up_front=True,
    ),  # fmt: skip
    "train-recipe-not-utf8": Case(
        lambda i: ["train", "--recipe", str(i.file("latin1.yaml", b"name: caf\xe9\nversion: 1\n"))],
        lambda i: [f"{i.root / 'latin1.yaml'}:1: is not valid UTF-8: byte 0xe9"],
    ),
    "train-model-without-tokenizer": Case(
        lambda i: _train(i, "--model", str(i.model_without_tokenizer())),
        lambda i: [f"Model {i.root / 'no-tokenizer'}: its tokenizer (5 tokens) turns ordinary words into unknown",
                   "it has no tokenizer file (tokenizer.json or vocab.txt"],
        refused_up_front=True,
    ),  # fmt: skip
    "eval-model-without-tokenizer": Case(
        lambda i: ["eval", str(i.model_without_tokenizer()), "--tasks", "sts", "--output", str(i.root / "out")],
        lambda i: [f"Model {i.root / 'no-tokenizer'}: its tokenizer", "it has no tokenizer file"],
        refused_up_front=True,
    ),
    "train-max-seq-length-above-position-limit": Case(
        lambda i: _train(i, "--max-seq-length", "512"),
        lambda i: ["--max-seq-length (training.max_seq_length) 512 is above the position limit", "128 tokens"],
        refused_up_front=True,
    ),
    "train-missing-guide-folder": Case(
        lambda i: [*_train(i), "--recipe", str(i.file("guide.yaml", (
            "name: guided\nversion: 1\ndata: {kind: simcse}\n"
            f"loss: {{name: InstanceWeightedMNRL, guide: {i.root / 'no-guide'}}}\n")))],
        lambda i: [f"{i.root / 'no-guide'}"],
        refused_up_front=True,
    ),  # fmt: skip
    "train-model-folder-without-a-model": Case(
        lambda i: _train(i, "--model", str(i.root)), lambda i: [str(i.root)]
    ),
    # a user's own rows, and the corpus they must not be given to
    "train-corpus-is-a-rows-file": Case(
        lambda i: _train(i, "--corpus", str(i.file("pairs.csv", "anchor,positive\nA man plays.,A man is playing.\n"))),
        lambda i: [f"--corpus {i.root / 'pairs.csv'}", "go to --rows"],
    ),
    "train-corpus-with-a-header": Case(
        lambda i: _train(i, "--corpus", str(i.file("pairs.txt", "anchor,positive\nA man plays.,A man is playing.\n"))),
        lambda i: ["is a header of columns", "go to --rows"],
    ),
    "train-row-columns-without-rows": Case(
        lambda i: _train(i, "--row-columns", "anchor,positive"),
        lambda i: ["--row-columns names the columns of --rows, which is not given"],
    ),
    "train-rows-missing": Case(
        lambda i: _train(i, "--rows", str(i.root / "missing.csv")),
        lambda i: [f"Rows file {i.root / 'missing.csv'} does not exist"],
    ),
    "train-rows-and-corpus": Case(
        lambda i: _train(i, "--rows", str(REPO / "examples" / "pairs.csv"), "--corpus", str(i.corpus())),
        lambda i: ["--rows gives the training rows: leave out --corpus"],
    ),
    "train-rows-the-loss-cannot-take": Case(
        lambda i: [*_train(i, "--rows", str(i.file("pairs.csv", "a,b\nA man plays.,A man is playing.\n"))),
                   "--recipe", "osscse"],
        lambda i: ["do not fit recipe 'osscse'", "MarginNegationLoss takes 3 text columns per row, got 2"],
    ),  # fmt: skip
    "train-rows-column-missing": Case(
        lambda i: _train(i, "--rows", str(REPO / "examples" / "pairs.csv"), "--row-columns", "anchor,paraphrase"),
        lambda i: ["no column(s) ['paraphrase']"],
    ),
    "train-rows-empty-cell": Case(
        lambda i: _train(i, "--rows", str(i.file("gap.jsonl", '{"a": "One.", "b": "Two."}\n{"a": "Three.", "b": " "}\n'))),
        lambda i: ["row 2, column 'b'", "is not a non-empty text"],
    ),
    "train-rows-no-batch-without-duplicates": Case(
        lambda i: _train(
            i, "--rows", str(i.file("same.csv", "anchor,positive\n" + "".join(f"Sentence {n}.,Same.\n" for n in range(48)))),
            "--batch-size", "16",
        ),
        lambda i: ["no-duplicates batch sampler formed no batch of 16 rows", "smaller --batch-size"],
    ),
    "build-input-is-a-rows-file": Case(
        lambda i: ["build", "simcse", "--input", str(REPO / "examples" / "pairs.csv"), "--output", str(i.root / "out")],
        lambda i: ["is a rows file's", "--rows"],
    ),
    "eval-pairs-missing": Case(
        lambda i: ["eval", "default", "--pairs", str(i.root / "missing.jsonl"), "--output", str(i.root / "out")],
        lambda i: [f"--pairs {i.root / 'missing.jsonl'}: no such file"],
    ),
    "eval-pairs-without-the-bias-probes": Case(
        lambda i: ["eval", "default", "--tasks", "sts", "--pairs", str(REPO / "examples" / "pairs.csv"),
                   "--output", str(i.root / "out")],
        lambda i: ["--pairs is read by the bias probes: add 'bias' to --tasks"],
    ),  # fmt: skip
    "train-non-utf8-corpus": pytest.param(
        Case(
            lambda i: _train(
                i, "--corpus", str(i.file("latin1.txt", "Caf\xe9 au lait.\n".encode("latin-1")))
            ),
            lambda i: [str(i.root / "latin1.txt") + ":1:", "not valid UTF-8"],
        ),
    ),  # fmt: skip
    "train-unknown-loss-parameter": pytest.param(
        Case(
            lambda i: [
                "train",
                "--recipe",
                str(
                    i.file(
                        "bad.yaml", "name: bad\nversion: 1\nloss: {name: FocalInfoNCE, params: {gama: 2}}\n"
                    )
                ),
                *_train(i)[3:],
            ],
            lambda i: [str(i.root / "bad.yaml"), "gama"],
        ),
    ),  # fmt: skip
    # eval
    "eval-unwritable-output": Case(
        lambda i: ["eval", str(i.model), "--tasks", "sts", "--output", str(i.blocker() / "out")],
        lambda i: [f"--output {i.root / 'a-file' / 'out'} is not writable"],
    ),
    "eval-unknown-task": Case(
        lambda i: ["eval", str(i.model), "--tasks", "sts,nope", "--output", str(i.root / "out")],
        lambda i: ["nope"],
    ),
    "eval-batch-size-not-a-number": Case(
        lambda i: ["eval", str(i.model), "--batch-size", "many", "--output", str(i.root / "out")],
        lambda i: ["--batch-size", "invalid int value: 'many'"],
    ),
    "eval-nan-score-in-sts-file": pytest.param(
        Case(
            lambda i: [
                "eval",
                str(i.model),
                "--tasks",
                "sts",
                "--no-progress",
                "--output",
                str(i.root / "out"),
                "--data-dir",
                str(i.sts_data_dir(_nan_score_line())),
            ],
            lambda i: [str(i.root / "data" / "sts" / "sts12.jsonl") + ":3:", "score"],
        ),
    ),  # fmt: skip
    # build
    "build-missing-input": Case(
        lambda i: ["build", "ipw", "--input", str(i.root / "missing.txt"), "--output", str(i.root / "out")],
        lambda i: [str(i.root / "missing.txt")],
    ),
    "build-blank-lines-corpus": Case(
        lambda i: [
            "build",
            "negation",
            "--input",
            str(i.file("blank.txt", "\n  \n\n")),
            "--output",
            str(i.root / "out"),
        ],
        lambda i: ["0 rows built from 3 input sentences", str(i.root / "blank.txt"), "empty: 3"],
        code=1,
    ),
    "build-ipw-blank-lines-corpus": Case(
        lambda i: [
            "build",
            "ipw",
            "--model",
            str(i.model),
            "--input",
            str(i.file("blank.txt", "\n\n")),
            "--output",
            str(i.root / "out"),
        ],
        lambda i: [str(i.root / "blank.txt"), "non-empty sentences, got 0"],
    ),  # fmt: skip
    "build-unwritable-output": Case(
        lambda i: ["build", "ipw", "--input", str(i.corpus()), "--output", str(i.blocker() / "out")],
        lambda i: [f"--output {i.root / 'a-file' / 'out'} is not writable"],
    ),
    "build-merge-of-a-folder-without-a-build": Case(
        lambda i: ["build", "merge", "--input", str(i.root), "--output", str(i.root / "out")],
        lambda i: [f"{i.root}: not a part of a --shard build (no part.json, no report.json + dataset/)"],
    ),
    "build-non-utf8-corpus": pytest.param(
        Case(
            lambda i: [
                "build",
                "negation",
                "--input",
                str(i.file("latin1.txt", "Caf\xe9.\n".encode("latin-1"))),
                "--output",
                str(i.root / "out"),
            ],
            lambda i: [str(i.root / "latin1.txt") + ":1:", "not valid UTF-8"],
        ),
    ),  # fmt: skip
    "build-without-input": Case(
        lambda i: ["build", "ipw", "--output", str(i.root / "out")], lambda i: ["give --input (a sentence file) or --rows"]
    ),
    "build-negation-given-an-ipw-option": Case(
        lambda i: ["build", "negation", "--input", str(i.corpus()), "--output", str(i.root / "out"),
                   "--pool-size", "8", "--model", str(i.model)],
        lambda i: ["--model, --pool-size not read by negation"],
    ),  # fmt: skip
    "build-ipw-given-a-negation-option": Case(
        lambda i: ["build", "ipw", "--input", str(i.corpus()), "--output", str(i.root / "out"),
                   "--spacy-model", "en_core_web_sm"],
        lambda i: ["--spacy-model not read by ipw"],
    ),  # fmt: skip
    # recipes and the dispatcher
    "recipes-unexpected-argument": Case(
        lambda i: ["recipes", "focal"], lambda i: ["unrecognized arguments: focal"]
    ),
    "unknown-command": Case(lambda i: ["trian"], lambda i: ["invalid choice: 'trian'"]),
}


def _leftovers(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if any(marker in path.name for marker in PARTIAL_MARKERS)]


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_bad_input_exits_non_zero_naming_it(case: Case, tiny_bert_dir: Path, tmp_path: Path, capsys) -> None:
    """Failure: a bad input exited 0, or failed with a message that named no file/line/argument, or left partial files."""
    inputs = Inputs(tmp_path, tiny_bert_dir)
    argv = case.argv(inputs)
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse errors
        code = stop.code
    captured = capsys.readouterr()
    assert code == case.code, captured.err[-2000:]
    for expected in case.message(inputs):
        assert expected in captured.err, f"{expected!r} not in:\n{captured.err[-2000:]}"
    assert _leftovers(tmp_path) == []
    out = tmp_path / "out"
    assert not (case.refused_up_front and out.exists()), f"{sorted(out.iterdir())} left by a refused command"
    for published in ("model", "dataset", "report.json", "results.json", "report.md"):
        assert not (out / published).exists(), f"{published} written by a failed command"


def test_help_does_not_import_torch() -> None:
    """Failure: ``st-debias --help`` imported every heavy library (~11 s) before printing a line."""
    probe = (
        "import sys\n"
        "from st_debias.cli import main\n"
        "for argv in (['--help'], ['train', '--help'], ['build', '--help'], ['eval', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'datasets', 'transformers') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout
    assert all(command in done.stdout for command in COMMANDS), "--help must list every command"


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "--recipe", "focal", "--steps", "0"],
        ["train", "--recipe", "focal", "--batch-size", "1"],
        ["train", "--recipe", "RECIPE_WITH_AN_UNKNOWN_KEY"],
        ["train", "--recipe", "focal", "--keep", "last", "--eval-steps", "-3"],
        ["train", "--recipe", "focal", "--rows", "MISSING_FILE"],
        ["train", "--recipe", "focal", "--corpus", "ROWS_FILE"],
        ["train", "--recipe", "simcse", "--rows", "ROWS_FILE", "--corpus", "ROWS_FILE"],
        ["eval", "default", "--tasks", "sts", "--pairs", "ROWS_FILE"],
        ["eval", "default", "--pairs", "MISSING_FILE"],
    ],
)
def test_bad_recipe_or_budget_is_refused_before_torch_is_imported(argv: list[str], tmp_path: Path) -> None:
    """Failure: a bad recipe or ``--steps 0`` took 8-16 s to be refused (torch, transformers and peft were imported
    before the recipe and the arguments were checked); so did a missing or misplaced rows file, and eval's
    misplaced ``--pairs``."""
    recipe = tmp_path / "bad.yaml"
    recipe.write_text("name: bad\nversion: 1\ntraining: {stepz: 3}\n", encoding="utf-8")
    rows = tmp_path / "pairs.csv"
    rows.write_text("anchor,positive\nA man plays.,A man is playing.\n", encoding="utf-8")
    named = {"RECIPE_WITH_AN_UNKNOWN_KEY": str(recipe), "ROWS_FILE": str(rows), "MISSING_FILE": str(tmp_path / "no.csv")}
    argv = [named.get(part, part) for part in argv]
    probe = (
        "import sys\n"
        "from st_debias.cli import main\n"
        f"code = main({argv + ['--output', str(tmp_path / 'out')]!r})\n"
        "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'peft') if m in sys.modules)\n"
        "print('EXIT', code, 'HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=REPO
    )
    assert "EXIT 2 HEAVY []" in done.stdout, done.stdout + done.stderr[-2000:]
    assert f"st-debias {argv[0]}:" in done.stderr
    assert not (tmp_path / "out").exists()


def test_recipes_command_lists_without_torch() -> None:
    """Failure: listing recipes loaded torch and datasets through the package import."""
    probe = "import sys\nfrom st_debias.cli import main\nmain(['recipes'])\nprint('HEAVY', 'torch' in sys.modules)\n"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "focal" in done.stdout and "HEAVY False" in done.stdout


def test_a_command_whose_module_fails_to_import_is_an_error(monkeypatch, capsys) -> None:
    """Failure: a subcommand whose module failed to import vanished from the CLI without a word (issue 13)."""
    monkeypatch.setitem(COMMANDS, "eval", ("st_debias.no_such_module", "evaluate"))
    assert main(["eval", "x", "--output", "y"]) == 1
    assert "st-debias eval: cannot import st_debias.no_such_module" in capsys.readouterr().err


def test_every_command_is_registered_by_its_module() -> None:
    """Failure: the dispatcher table names a command its module no longer registers (a dead entry in --help)."""
    from st_debias.cli import build_parser

    for command in COMMANDS:
        parser = build_parser(command)
        subparsers = next(action for action in parser._actions if action.dest == "command")
        assert command in subparsers.choices, f"{COMMANDS[command][0]} does not register {command!r}"


def test_build_help_groups_the_options_of_each_kind(capsys) -> None:
    """`build --help` listed IPW-only flags as if `negation` read them."""
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = capsys.readouterr().out
    shared, ipw, negation = text.split("\noptions:")[1].split("\nipw only:")[0], *text.split("\nipw only:")[1].split(
        "\nnegation, minimal_pairs and paraphrase only:"
    )
    for flag in ("--pool-size", "--lambda-n", "--model"):
        assert f"  {flag} " in ipw and flag not in shared + negation, flag
    for flag in ("--shard", "--num-proc", "--cache-dir"):  # every kind reads them
        assert f"  {flag} " in shared and flag not in ipw + negation, flag
    assert "--spacy-model" in negation and "--spacy-model" not in shared + ipw
    assert "--option KEY=VALUE" in shared


def test_a_kinds_own_flags_take_their_defaults_and_help_from_its_builder(capsys) -> None:
    """The flags of ``build ipw`` were a second copy of IPWBuilder's defaults; now they are read from it."""
    import inspect

    from st_debias.data.ipw.builder import IPWBuilder
    from st_debias.data.kinds import DATA_KINDS

    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    parameters = inspect.signature(IPWBuilder).parameters  # read from the source at --help; here, imported
    for option in DATA_KINDS["ipw"].flags:
        default, help_text = DATA_KINDS["ipw"].flag_options()[option]
        assert default == parameters[option].default and help_text != option.replace("_", " "), option
        assert f"--{option.replace('_', '-')} {option.upper()} {help_text} (default {default})" in text, option


def test_build_makes_every_data_kind(capsys) -> None:
    """`st-debias build` could not build the flagship recipe's minimal pairs: every registered kind is a choice."""
    from st_debias.data.kinds import DATA_KINDS

    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = capsys.readouterr().out
    assert "{" + ",".join([*DATA_KINDS, "merge"]) + "}" in text
    for name, kind in DATA_KINDS.items():
        assert f"{name}: {kind.description}" in " ".join(text.split()), name


@pytest.mark.parametrize(
    ("kind", "extra", "message"),
    [
        ("simcse", ["--option", "shares=1"], "data kind 'simcse' takes no options"),
        ("minimal_pairs", ["--option", "nope=1"], "--option ['nope'] are not options of the minimal_pairs builder"),
        ("minimal_pairs", ["--option", "shares={swap: -1}"], "--option: shares: unknown families"),
        ("minimal_pairs", ["--option", "on_missing_positive"], "expected KEY=VALUE"),
        ("minimal_pairs", ["--generator", "edits"], "--generator not read by minimal_pairs"),
    ],
)
def test_build_refuses_a_bad_option_before_any_work(tmp_path, capsys, kind, extra, message) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("A man plays a guitar.\n", encoding="utf-8")
    code = main(["build", kind, "--input", str(corpus), "--output", str(tmp_path / "out"), *extra])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _disk_full(*args, **kwargs):
    import errno

    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("failing", ["output", "cache"])
def test_a_full_disk_while_build_writes_is_exit_2_naming_the_folder(tmp_path, monkeypatch, capsys, failing) -> None:
    """Failure: a full disk while `build` saved its dataset crashed with a traceback, and one while it saved its
    block cache was reported against the input file, naming no path; nothing may be left."""
    from datasets import Dataset

    from tests.conftest import first_sentences

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(first_sentences(20)) + "\n")
    out, cache = tmp_path / "out", tmp_path / "cache"
    save = Dataset.save_to_disk

    def full_under(folder: Path):
        def save_or_fail(self, path, *args, **kwargs):
            if str(path).startswith(str(folder)):
                _disk_full()
            return save(self, path, *args, **kwargs)

        return save_or_fail

    monkeypatch.setattr(Dataset, "save_to_disk", full_under(out if failing == "output" else cache))
    assert main(["build", "simcse", "--input", str(corpus), "--output", str(out), "--cache-dir", str(cache)]) == 2
    err = capsys.readouterr().err
    named = out / "dataset" if failing == "output" else cache / "blocks"
    assert f"st-debias build: error: [Errno 28] No space left on device writing {named}" in err, err[-1000:]
    assert not out.exists()


def test_a_full_disk_in_a_cache_write_names_the_cache_file_not_the_input(tmp_path, monkeypatch) -> None:
    """Failure: a full disk while a build wrote its embedding cache was reported against the input file, with no
    path of its own."""
    import numpy as np

    from st_debias.files import atomic_path

    target = tmp_path / "cache" / "embeddings" / "key.npy"
    monkeypatch.setattr(np, "save", _disk_full)
    with pytest.raises(OSError, match=rf"No space left on device writing {target}: [\d,]+ bytes free"):
        with atomic_path(target) as partial:
            np.save(partial, np.zeros(3))
    assert list(target.parent.iterdir()) == []
