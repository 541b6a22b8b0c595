"""``st-debias`` command line: argument parsing only; each subcommand lives with its module.

Subcommands register themselves through a ``register(subparsers)`` function that adds a parser and
sets ``func`` (called with the parsed arguments, returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

_SUBCOMMAND_MODULES = ("st_debias.evaluation.cli", "st_debias.recipes.cli", "st_debias.data.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="st-debias", description="Debias sentence-transformers models: build data, train, evaluate."
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module_name in _SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name == module_name:
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
