"""The lab loss ``ClusterCapMarginLoss`` (benchmarks/polarity_cluster/cluster_cap.py): the margin plus a one-sided cap on
the negation column's cluster, against a float64 reference written from the equation, with gradcheck, the cap's
one-sidedness, its reference model, and through the recipe registry."""

from __future__ import annotations

import math

import pytest
import torch

from benchmarks.polarity_cluster import cluster_cap
from benchmarks.polarity_cluster.cluster_cap import ClusterCapMarginLoss
from st_debias.losses import MarginNegationLoss
from tests.benchmarks.conftest import recipe_built_lab_loss


def cos(x: list[float], y: list[float]) -> float:
    return sum(a * b for a, b in zip(x, y)) / math.sqrt(sum(a * a for a in x) * sum(b * b for b in y))


def pairwise_mean(rows: list[list[float]]) -> float:
    """m(X): the mean cosine over the ordered pairs i ≠ j, one pair at a time."""
    pairs = [cos(rows[i], rows[j]) for i in range(len(rows)) for j in range(len(rows)) if i != j]
    return sum(pairs) / len(pairs)


def reference(columns: list[torch.Tensor], excess_star: float, alpha: float, beta: float, weight: float,
              scale: float, cap_weight: float) -> float:
    """l_c + λ · mean_i [max(s(a,n) − s(a,p) + α, 0) + max(s(a,p) − s(a,n) − β, 0)] + w · max(m(n) − m(a) − e*, 0),
    in float64; l_c = InfoNCE(anchor, view) when a fourth column is given."""
    anchor, paraphrase, negation = ([[float(v) for v in row] for row in c.detach().double()] for c in columns[:3])
    rows = len(anchor)
    margin = 0.0
    for i in range(rows):
        gap = cos(anchor[i], paraphrase[i]) - cos(anchor[i], negation[i])
        margin += max(alpha - gap, 0.0) + max(gap - beta, 0.0)
    total = weight * margin / rows
    total += cap_weight * max(pairwise_mean(negation) - pairwise_mean(anchor) - excess_star, 0.0)
    if len(columns) == 4:
        view = [[float(v) for v in row] for row in columns[3].detach().double()]
        for i in range(rows):
            logits = [scale * cos(anchor[i], view[j]) for j in range(rows)]
            total += (math.log(sum(math.exp(x) for x in logits)) - logits[i]) / rows
    return total


def clustered_columns(seed: int, count: int, shared: float) -> list[torch.Tensor]:
    """Random columns whose negation column shares a direction (a polarity cluster of strength ``shared``)."""
    generator = torch.Generator().manual_seed(seed)
    columns = [torch.randn(6, 8, generator=generator, dtype=torch.float64) for _ in range(count)]
    columns[2] = columns[2] + shared * torch.eye(8, dtype=torch.float64)[0]
    return [c.requires_grad_(True) for c in columns]


@pytest.mark.parametrize("contrastive", ["dropout", None])
def test_matches_the_float64_reference_and_passes_gradcheck(contrastive: str | None, monkeypatch) -> None:
    columns = clustered_columns(0, 4 if contrastive else 3, shared=2.0)
    loss = ClusterCapMarginLoss(None, cap_weight=0.9, alpha=0.1, beta=0.3, margin_weight=0.7, contrastive=contrastive, scale=5.0)
    value = loss.compute_loss_from_embeddings(columns, reference_excess=0.05)
    expected = reference(columns, 0.05, 0.1, 0.3, 0.7, 5.0, 0.9)
    assert value.item() == pytest.approx(expected, rel=1e-10)
    plain = MarginNegationLoss.compute_loss_from_embeddings(loss, columns)
    assert value.item() - plain.item() > 0.05, "the cap is active on these columns, so the reference tells them apart"
    # m(anchor) carries no gradient: gradcheck holds it at its value for these inputs.
    held = cluster_cap.mean_pairwise_cosine(columns[0]).detach()
    monkeypatch.setattr(cluster_cap, "cluster_excess", lambda anchor, negation: cluster_cap.mean_pairwise_cosine(negation) - held)
    assert torch.autograd.gradcheck(
        lambda *c: loss.compute_loss_from_embeddings(list(c), reference_excess=0.05), tuple(columns)
    )


def test_the_cap_is_one_sided_and_moves_only_the_negations() -> None:
    columns = clustered_columns(1, 3, shared=2.0)
    loss = ClusterCapMarginLoss(None, cap_weight=1.0, alpha=0.1, beta=0.3, margin_weight=0.0, contrastive=None, return_parts=True)
    excess = cluster_cap.cluster_excess(columns[0], columns[2]).item()
    above = loss.compute_loss_from_embeddings(columns, reference_excess=excess - 0.1)["cluster_cap"]
    assert above.item() == pytest.approx(0.1, rel=1e-10)
    above.backward()
    anchor, paraphrase, negation = (c.grad for c in columns)
    assert anchor is None or anchor.abs().max() == 0, "the anchors' cluster is the cap's baseline, not a target"
    assert negation.abs().max() > 0
    # Following the gradient lowers the negation column's cluster.
    stepped = columns[2].detach() - 0.1 * negation
    assert cluster_cap.mean_pairwise_cosine(stepped) < cluster_cap.mean_pairwise_cosine(columns[2].detach())
    below = loss.compute_loss_from_embeddings(columns, reference_excess=excess + 0.1)["cluster_cap"]
    assert below.item() == 0.0, "exactly zero once the cap holds"


def test_mean_pairwise_cosine_of_one_row_is_zero_with_a_gradient() -> None:
    one = torch.randn(1, 4, requires_grad=True)
    value = cluster_cap.mean_pairwise_cosine(one)
    assert value.item() == 0.0 and value.requires_grad


def test_the_reference_is_a_frozen_copy_of_the_start_model(tiny_model) -> None:
    loss = ClusterCapMarginLoss(tiny_model, cap_weight=0.5, margin_weight=1e-3)
    reference_model = loss._reference[0]
    assert reference_model is not tiny_model
    assert not any(p.requires_grad for p in reference_model.parameters())
    assert not any(n.startswith("_reference") for n, _ in loss.named_parameters()), "neither saved nor optimised"
    features = [tiny_model.tokenize(texts) for texts in (["a b c", "d e f"], ["b a c", "e d f"], ["not a b c", "not d e f"])]
    start = loss.reference_excess(features[0], features[2])
    with torch.no_grad():
        embedded = [tiny_model(dict(f))["sentence_embedding"] for f in (features[0], features[2])]
    assert start.item() == pytest.approx(cluster_cap.cluster_excess(*embedded).item(), abs=1e-6)
    # Training moves the model, not the reference.
    with torch.no_grad():
        for parameter in tiny_model.parameters():
            parameter.add_(0.05)
    assert loss.reference_excess(features[0], features[2]).item() == pytest.approx(start.item(), abs=1e-7)
    value = loss(features)
    value.backward()
    assert torch.isfinite(value)


def test_bad_settings_are_refused_and_a_recipe_names_it(tiny_model) -> None:
    with pytest.raises(ValueError, match="cap_weight"):
        ClusterCapMarginLoss(None, cap_weight=-1.0)
    with pytest.raises(ValueError, match="reference_excess"):
        ClusterCapMarginLoss(None).compute_loss_from_embeddings([torch.randn(2, 4) for _ in range(4)])
    loss = recipe_built_lab_loss("ClusterCapMarginLoss", {"cap_weight": 0.02, "margin_weight": 2e-3}, tiny_model)
    assert loss.get_config_dict()["cap_weight"] == 0.02


def test_negation_counts_from_token_ids_match_negation_count_on_real_sentences(tiny_model) -> None:
    from st_debias.data.negation.negator import negation_count
    from st_debias.evaluation import load_negation_pairs

    pairs = load_negation_pairs(limit=400)
    texts = pairs.sentences + pairs.negations
    words, contraction = cluster_cap.negation_tokens(tiny_model.tokenizer)
    assert contraction is not None and len(words) >= 8
    tiny_model.max_seq_length = 256
    features = tiny_model.tokenize(texts)
    counts = cluster_cap.negation_counts(features["input_ids"], features["attention_mask"], words, contraction)
    expected = torch.tensor([negation_count(t) for t in texts])
    assert (expected > 0).sum() >= 200 and any("n't" in t for t in texts), "the sentences exercise both forms"
    agree = (counts == expected).float().mean().item()
    # Words the tokenizer splits ("nowhere", "n’t" with a curly apostrophe) are not counted; nearly all agree.
    assert agree >= 0.98, f"{agree:.3f}"
    rows = cluster_cap.ClusterCapMarginLoss(tiny_model, cap_rows="negated").negated_rows(
        tiny_model.tokenize(pairs.sentences), tiny_model.tokenize(pairs.negations))
    by_text = torch.tensor([negation_count(n) > negation_count(s) for s, n in zip(pairs.sentences, pairs.negations)])
    assert (rows == by_text).float().mean().item() >= 0.98


def test_the_negated_rows_cap_is_taken_over_those_rows_alone() -> None:
    columns = clustered_columns(3, 3, shared=2.0)
    rows = torch.tensor([True, False, True, True, False, False])
    loss = ClusterCapMarginLoss(None, cap_weight=1.0, margin_weight=0.0, contrastive=None, return_parts=True)
    got = loss.compute_loss_from_embeddings(columns, reference_excess=-1.0, rows=rows)["cluster_cap"]
    negation = [[float(v) for v in r] for r in columns[2].detach()[rows]]
    anchor = [[float(v) for v in r] for r in columns[0].detach()[rows]]
    assert got.item() == pytest.approx(pairwise_mean(negation) - pairwise_mean(anchor) + 1.0, rel=1e-10)
    got.backward()
    assert columns[2].grad[~rows].abs().max() == 0, "rows outside the mask are not moved by the cap"
    one = torch.tensor([True, False, False, False, False, False])
    assert loss.compute_loss_from_embeddings(columns, reference_excess=0.0, rows=one)["cluster_cap"].item() == 0.0


def test_the_reference_can_embed_with_dropout(tiny_model) -> None:
    with pytest.raises(ValueError, match="cap_rows"):
        ClusterCapMarginLoss(tiny_model, cap_rows="some")
    assert not ClusterCapMarginLoss(tiny_model)._reference[0].training
    loss = ClusterCapMarginLoss(tiny_model, cap_rows="negated", reference_dropout=True)
    assert loss._reference[0].training
    features = [tiny_model.tokenize(t) for t in (["a b c", "d e f", "g h"], ["b a c", "e d f", "h g"],
                                                  ["not a b c", "d e f never", "g h"])]
    rows = loss.negated_rows(features[0], features[2])
    assert rows.tolist() == [True, True, False]
    value = loss(features)
    value.backward()
    assert torch.isfinite(value)


def test_the_hold_is_two_sided_and_matches_its_reference(monkeypatch) -> None:
    columns = clustered_columns(4, 3, shared=2.0)
    loss = ClusterCapMarginLoss(None, cap_weight=0.8, margin_weight=0.0, contrastive=None, cap_shape="hold", return_parts=True)
    negation = [[float(v) for v in r] for r in columns[2].detach()]
    anchor = [[float(v) for v in r] for r in columns[0].detach()]
    excess = pairwise_mean(negation) - pairwise_mean(anchor)
    for offset in (-0.2, 0.3):  # the reference's figure above and below the batch's
        got = loss.compute_loss_from_embeddings(columns, reference_excess=excess + offset)["cluster_cap"]
        assert got.item() == pytest.approx(0.8 * offset**2, rel=1e-9)
    below = loss.compute_loss_from_embeddings(columns, reference_excess=excess + 0.3)["cluster_cap"]
    (gradient,) = torch.autograd.grad(below, columns[2])
    stepped = columns[2].detach() - 0.05 * gradient
    assert cluster_cap.mean_pairwise_cosine(stepped) > cluster_cap.mean_pairwise_cosine(columns[2].detach()), "pulled back up"
    held = cluster_cap.mean_pairwise_cosine(columns[0]).detach()
    monkeypatch.setattr(cluster_cap, "cluster_excess", lambda a, n: cluster_cap.mean_pairwise_cosine(n) - held)
    summed = ClusterCapMarginLoss(None, cap_weight=0.8, margin_weight=0.3, contrastive=None, cap_shape="hold")
    assert torch.autograd.gradcheck(lambda *c: summed.compute_loss_from_embeddings(list(c), reference_excess=0.1), tuple(columns))
    with pytest.raises(ValueError, match="cap_shape"):
        ClusterCapMarginLoss(None, cap_shape="square")
