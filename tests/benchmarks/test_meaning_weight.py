"""The lab loss ``MeaningWeightedMarginLoss`` (benchmarks/negation_meaning/meaning_weight.py): the margin with the
negation-meaning rows weighted apart, against a float64 reference written from the equation, with gradcheck, the
rows it weighs on real sentences, and through the recipe registry."""

from __future__ import annotations

import math

import pytest
import torch

from benchmarks.negation_meaning.meaning_weight import MeaningWeightedMarginLoss, is_meaning_row, row_weights
from st_debias.losses import MarginNegationLoss
from tests.benchmarks.conftest import recipe_built_lab_loss
from tests.conftest import first_sentences


def reference(columns: list[torch.Tensor], weights: list[float], alpha: float, beta: float, lam: float, scale: float) -> float:
    """λ · (1/N) Σ_i w_i [max(s(a,n) − s(a,p) + α, 0) + max(s(a,p) − s(a,n) − β, 0)] + InfoNCE(anchor, view), one row
    at a time in float64."""

    def cos(x: list[float], y: list[float]) -> float:
        return sum(a * b for a, b in zip(x, y)) / math.sqrt(sum(a * a for a in x) * sum(b * b for b in y))

    anchor, paraphrase, negation, view = ([[float(v) for v in row] for row in c.detach().double()] for c in columns)
    rows = len(anchor)
    margin = 0.0
    for i in range(rows):
        gap = cos(anchor[i], paraphrase[i]) - cos(anchor[i], negation[i])
        margin += weights[i] * (max(alpha - gap, 0.0) + max(gap - beta, 0.0))
    total = lam * margin / rows
    for i in range(rows):
        logits = [scale * cos(anchor[i], view[j]) for j in range(rows)]
        total += (math.log(sum(math.exp(x) for x in logits)) - logits[i]) / rows
    return total


def test_matches_the_float64_reference_and_passes_gradcheck() -> None:
    generator = torch.Generator().manual_seed(0)
    columns = [torch.randn(6, 8, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    weights = [5.0, 1.0, 1.0, 5.0, 1.0, 5.0]
    loss = MeaningWeightedMarginLoss(None, meaning_weight=5.0, alpha=0.1, beta=0.3, margin_weight=0.7, scale=5.0)
    value = loss.compute_loss_from_embeddings(columns, torch.tensor(weights))
    assert value.item() == pytest.approx(reference(columns, weights, 0.1, 0.3, 0.7, 5.0), rel=1e-10)
    assert value.item() != pytest.approx(reference(columns, [1.0] * 6, 0.1, 0.3, 0.7, 5.0), rel=1e-6)
    assert torch.autograd.gradcheck(
        lambda *c: loss.compute_loss_from_embeddings(list(c), torch.tensor(weights)), tuple(columns)
    )


def test_weight_one_or_no_weights_is_the_margin_negation_loss() -> None:
    generator = torch.Generator().manual_seed(1)
    columns = [torch.randn(5, 8, generator=generator, dtype=torch.float64) for _ in range(4)]
    settings = {"alpha": 0.1, "beta": 0.3, "margin_weight": 0.7, "scale": 5.0}
    plain = MarginNegationLoss(None, **settings).compute_loss_from_embeddings(columns).item()
    loss = MeaningWeightedMarginLoss(None, meaning_weight=3.0, **settings)
    assert loss.compute_loss_from_embeddings(columns).item() == pytest.approx(plain, rel=1e-12)
    assert loss.compute_loss_from_embeddings(columns, torch.ones(5)).item() == pytest.approx(plain, rel=1e-12)
    with pytest.raises(ValueError, match="meaning_weight"):
        MeaningWeightedMarginLoss(None, meaning_weight=-1.0)


def test_it_weighs_the_negation_meaning_rows_and_no_minimal_pair() -> None:
    from st_debias.data.minimal_pairs.builder import MinimalPairBuilder
    from st_debias.data.negation.negator import Negator, negation_count
    from st_debias.recipes.mix_sources import meaning_rows, negation_meaning_quadruples

    negator = Negator()
    sentences = first_sentences(4000)
    quadruples, _ = negation_meaning_quadruples(sentences, None)
    meaning = meaning_rows(quadruples)
    assert len(meaning) >= 40
    assert all(is_meaning_row(*row) for row in meaning)
    from benchmarks.negation_meaning.affirmative_negatives import affirmative_negative_rows

    affirmative, _ = affirmative_negative_rows(sentences=sentences)
    assert len(affirmative) == len(meaning) and all(is_meaning_row(*row) for row in affirmative)
    pairs = MinimalPairBuilder(negator=negator, seed=3).build(sentences[:300])
    rows = list(zip(pairs["anchor"], pairs["positive"], pairs["negative"], strict=True))
    assert sum(w == 1.0 for w in row_weights(rows, 4.0)) == len(rows) > 200
    assert any(negation_count(anchor) for anchor, _, _ in rows), "some minimal pairs have a negated anchor"


def test_forward_reads_the_rows_through_the_tokenizer(tiny_model, monkeypatch) -> None:
    rows = [
        ("The road isn't wide.", "The road is narrow.", "The road is not narrow."),
        ("The road is wide.", "The road is not narrow.", "The road is narrow."),
        ("He did not go.", "He didn't go.", "He went."),
    ]
    features = [tiny_model.tokenize([row[i] for row in rows]) for i in range(3)]
    loss = MeaningWeightedMarginLoss(tiny_model, meaning_weight=5.0, alpha=0.1, beta=0.3, margin_weight=2e-3)
    seen = []
    original = loss.compute_loss_from_embeddings
    monkeypatch.setattr(loss, "compute_loss_from_embeddings", lambda e, w: seen.append(w) or original(e, w))
    loss(features)
    assert seen[0].tolist() == [5.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="needs the model"):
        MeaningWeightedMarginLoss(None)(features)


def test_a_recipe_names_it(tiny_model) -> None:
    loss = recipe_built_lab_loss("MeaningWeightedMarginLoss", {"meaning_weight": 5.0, "margin_weight": 2e-3}, tiny_model)
    assert loss.get_config_dict()["meaning_weight"] == 5.0
