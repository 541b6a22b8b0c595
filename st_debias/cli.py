"""``st-debias`` command line: argument parsing only; each subcommand lives with its module.

Subcommand modules are imported only when their command runs, so ``st-debias --help`` starts in well under
a second (no torch, sentence-transformers or datasets). Each module has a ``register(subparsers)`` function
that adds its parser(s) and sets ``func`` (called with the parsed arguments, returning an exit code). A
module that fails to import is an error naming it, never a silently missing command.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys

# command -> (module that registers it, one-line summary for ``st-debias --help``)
COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("st_debias.recipes.cli", "train a model with a debiasing recipe and show before/after scores"),
    "recipes": ("st_debias.recipes.cli", "list the packaged recipes"),
    "eval": (
        "st_debias.evaluation.cli",
        "evaluate models: STS-7, MTEB STS, bias probes; write results.json and a report",
    ),
    "build": ("st_debias.data.cli", "build training rows of any data kind a recipe names, from sentences or your rows; merge shards"),
}


def _top_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(
        prog="st-debias", description="Debias sentence-transformers models: build data, train, evaluate."
    )
    return parser, parser.add_subparsers(
        dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}"
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``st-debias`` parser with ``command``'s full parser (its module imported), or summaries only.

    Raises:
        ImportError: the module of ``command`` cannot be imported (named in the message).
    """
    parser, subparsers = _top_parser()
    if command in COMMANDS:
        module_name = COMMANDS[command][0]
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ImportError(f"st-debias {command}: cannot import {module_name}: {error}") from error
        module.register(subparsers)
        return parser
    for name, (_, summary) in COMMANDS.items():
        subparsers.add_parser(name, help=summary, add_help=False)
    return parser


def _command(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (the first argument not starting with '-'), if any."""
    return next((argument for argument in argv if not argument.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command(argv)
    try:
        parser = build_parser(command)
    except ImportError as error:
        print(f"st-debias: error: {error}", file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:  # Ctrl-C outside the training loop (which saves a checkpoint itself): one line
        print(f"\nst-debias {command}: interrupted by SIGINT (Ctrl-C); stopped.", file=sys.stderr)
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main())
