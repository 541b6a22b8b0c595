"""Paraphrase/positive candidates from any Hugging Face seq2seq model (back-translation, paraphrasers).

For users with a model hub: MarianMT back-translation as in DebCSE (en→zh→en, Helsinki-NLP opus-mt) or
OssCSE (en→de→en, en→ru→en, facebook wmt19), or a single paraphrase model. Each hop is a
(model, tokenizer) pair; the first hop's outputs feed the second. Before the first hop, DebCSE injects
1–2 high-frequency words or masks 1–2 words so that the generator produces varied candidates:
``noise="insert"`` / ``"delete"`` does that (deterministically, per sentence).

Nothing here is downloaded unless you pass hub names; pass loaded objects to stay offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch

from st_debias.data.generators import Candidate, CandidateGenerator
from st_debias.data.paraphrase.edits import FrequentWordInsertion, WordDeletion


def _load_hop(hop):
    if isinstance(hop, str):
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        return AutoModelForSeq2SeqLM.from_pretrained(hop), AutoTokenizer.from_pretrained(hop)
    model, tokenizer = hop
    return model, tokenizer


class Seq2SeqGenerator(CandidateGenerator):
    """Candidates from a chain of seq2seq models (one hop = a paraphraser; two = back-translation).

    Args:
        hops: each a hub name / local folder, or a ``(model, tokenizer)`` pair; e.g.
            ``["Helsinki-NLP/opus-mt-en-zh", "Helsinki-NLP/opus-mt-zh-en"]``.
        num_candidates: sequences returned by the last hop per input (beam search).
        num_beams: beams per hop (>= num_candidates).
        noise: ``None``, ``"insert"`` (1–2 frequent words injected first) or ``"delete"`` (1–2 words
            dropped first), DebCSE §4.2.
        max_new_tokens: generation length limit per hop.
        batch_size: sentences per generate call.
        device: torch device for the models (default: where they are).
        name: generator name recorded in candidates.
    """

    def __init__(
        self,
        hops: Sequence[str | tuple[object, object]],
        *,
        num_candidates: int = 2,
        num_beams: int = 4,
        noise: Literal["insert", "delete"] | None = None,
        max_new_tokens: int = 128,
        batch_size: int = 16,
        device: str | None = None,
        name: str = "seq2seq",
    ) -> None:
        super().__init__()
        if not hops:
            raise ValueError("Seq2SeqGenerator needs at least one model hop")
        if num_beams < num_candidates:
            raise ValueError(f"num_beams ({num_beams}) must be >= num_candidates ({num_candidates})")
        if noise not in (None, "insert", "delete"):
            raise ValueError(f"noise must be None, 'insert' or 'delete', got {noise!r}")
        self.hops = [_load_hop(h) for h in hops]
        if device is not None:
            for model, _ in self.hops:
                model.to(device)
        self.num_candidates = num_candidates
        self.num_beams = num_beams
        self.noise = noise
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.name = name

    @torch.no_grad()
    def _translate(self, hop, texts: list[str], num_return: int) -> list[list[str]]:
        model, tokenizer = hop
        model.eval()
        out: list[list[str]] = []
        device = next(model.parameters()).device
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            encoded = tokenizer(batch, return_tensors="pt", padding=True, truncation=True).to(device)
            encoded.pop("token_type_ids", None)
            generated = model.generate(
                **encoded, num_beams=self.num_beams, num_return_sequences=num_return,
                max_new_tokens=self.max_new_tokens, do_sample=False,
            )
            decoded = tokenizer.batch_decode(generated, skip_special_tokens=True)
            for i in range(len(batch)):
                out.append([d.strip() for d in decoded[i * num_return : (i + 1) * num_return]])
        return out

    def generate(self, sentences: Sequence[str], *, seed: int = 0) -> list[list[Candidate]]:
        self.report = type(self.report)()
        self.report.inputs = len(sentences)
        inputs = list(sentences)
        if self.noise is not None:
            noiser = FrequentWordInsertion(num_candidates=1) if self.noise == "insert" else \
                WordDeletion(num_candidates=1)
            noised = noiser.generate(inputs, seed=seed)
            inputs = [c[0].text if c else s for s, c in zip(inputs, noised)]
        current = [[text] for text in inputs]
        for depth, hop in enumerate(self.hops):
            last = depth == len(self.hops) - 1
            flat = [text for texts in current for text in texts]
            translated = self._translate(hop, flat, self.num_candidates if last else 1)
            regrouped: list[list[str]] = []
            pos = 0
            for texts in current:
                group: list[str] = []
                for _ in texts:
                    group.extend(translated[pos])
                    pos += 1
                regrouped.append(group)
            current = regrouped
        transforms = ((f"noise_{self.noise}",) if self.noise else ()) + tuple(f"hop{i}" for i in range(len(self.hops)))
        results: list[list[Candidate]] = []
        for sentence, texts in zip(sentences, current):
            cands: list[Candidate] = []
            for text in texts:
                if text and text != sentence and all(c.text != text for c in cands):
                    cands.append(Candidate(text, self.name, transforms))
            if cands:
                self.report.with_candidates += 1
                self.report.candidates += len(cands)
            else:
                self.report.declined["empty_or_identical_output"] += 1
            results.append(cands)
        return results
