"""NLI triplets as training rows: (premise, entailed hypothesis, contradicting hypothesis).

Human-written NLI pairs are the lexically diverse positives rule-based edits cannot make (SNLI premise and
entailed hypothesis share about a quarter of their words; an edited sentence shares nearly all of them).
Three things are done to them before they can be mixed into training rows, each counted:

* **Evaluation overlap.** A triplet is dropped when any of its sentences occurs in an STS or SICK file of
  the data folder (compared as lower-cased words): SNLI's premises are image captions, and so are part of
  STS-B's and SICK's.
* **The negation cue.** SNLI's contradicting hypotheses carry a negation word far more often than its
  entailed ones (4.3 % against 0.7 % of the shared triplets), so "contains *not*" would tell the negative
  from the positive. A triplet whose contradiction has a negation word and whose entailment has none is
  dropped.
* **Tokenisation.** The shared SNLI text is tokenised (``packages .``, ``do n't``); it is detokenised so that
  NLI rows do not differ from corpus rows by their spacing.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from st_debias.datafiles import parse_json_line, require_text, text_lines
from st_debias.paths import DATA_ENV, DataNotFoundError, data_file, portable_path

NLI_TRIPLETS = "nli/snli_devtest_triplets.jsonl"
#: The JSONL fields of the shared layout (SimCSE's nli_for_simcse.csv columns), in row order.
NLI_FIELDS = ("sent0", "sent1", "hard_neg")

_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,!?;:%)\]}])")
_SPACE_AFTER_OPENING = re.compile(r"([(\[{$])\s+")
_SPLIT_CLITIC = re.compile(r"\s+(n't|'s|'re|'ve|'m|'ll|'d)\b", re.IGNORECASE)


def detokenize(text: str) -> str:
    """Undo PTB-style spacing: ``Two women are embracing .`` → ``Two women are embracing.``, ``do n't`` → ``don't``."""
    text = _SPLIT_CLITIC.sub(r"\1", text.strip())
    text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text)
    return _SPACE_AFTER_OPENING.sub(r"\1", text)


@dataclass
class NLITriplets:
    """Kept triplets (detokenised) and what was dropped, by reason."""

    anchors: list[str] = field(default_factory=list)
    positives: list[str] = field(default_factory=list)
    negatives: list[str] = field(default_factory=list)
    source: str = ""
    read: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    def __len__(self) -> int:
        return len(self.anchors)

    def describe(self) -> dict[str, object]:
        """JSON-ready counts: triplets read, kept and dropped by reason."""
        return {
            "source": portable_path(self.source),
            "read": self.read,
            "kept": len(self),
            "dropped": dict(sorted(self.dropped.items())),
        }


def load_nli_triplets(
    path: str | os.PathLike[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    *,
    exclude: set[str],
) -> NLITriplets:
    """Read, check and filter NLI triplets (module docstring), in file order.

    Args:
        path: a JSONL file with ``sent0``, ``sent1`` and ``hard_neg`` (default: the data folder's SNLI triplets).
        data_dir: data folder (default ``$ST_DEBIAS_DATA``).
        exclude: sentences as :func:`~st_debias.data.text.word_key` gives them; a triplet with any of them is
            dropped. Training uses every STS and SICK sentence of the data folder
            (:func:`st_debias.evaluation.sts_data.evaluation_sentences`).

    Raises:
        DataNotFoundError: the file is missing.
        st_debias.datafiles.DataFileError: a line that is not a JSON object, or a field missing or empty (the
            message names file, line and field).
    """
    file = Path(path) if path is not None else data_file(NLI_TRIPLETS, data_dir)
    if not file.is_file():
        raise DataNotFoundError(f"Missing NLI triplet file {file.resolve()}. Set {DATA_ENV} or pass data_dir=...")
    from st_debias.data.negation.negator import negation_count
    from st_debias.data.text import word_key

    out = NLITriplets(source=str(file.resolve()))
    for line_number, line in text_lines(file):
        if not line.strip():
            continue
        record = parse_json_line(file, line_number, line)
        anchor, positive, negative = (
            detokenize(require_text(record.get(name), file, line_number, name)) for name in NLI_FIELDS
        )
        out.read += 1
        if any(word_key(text) in exclude for text in (anchor, positive, negative)):
            out.dropped["in_an_sts_or_sick_file"] += 1
        elif negation_count(negative) and not negation_count(positive):
            out.dropped["negation_cue"] += 1
        else:
            out.anchors.append(anchor)
            out.positives.append(positive)
            out.negatives.append(negative)
    return out
