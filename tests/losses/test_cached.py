"""The cached (GradCache) losses give the uncached losses' values and parameter gradients, in float64.

Guards against the silent failures of gradient caching: a replay whose dropout masks differ from the
first pass (gradients of other embeddings), mini-batch boundaries that drop or repeat rows, a guide or
noise negatives recomputed differently between passes, batch statistics taken per mini-batch, and the
named parts of a dict-returning loss getting the gradient of their sum.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from sentence_transformers.base.losses.gradcache import _create_minibatch, _minibatch_ranges
from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

from st_debias.losses import (
    CachedDebiasInfoNCE,
    CachedFocalInfoNCE,
    CachedInstanceWeightedMNRL,
    CachedLoss,
    CachedMarginNegationLoss,
    DebiasInfoNCE,
    FocalInfoNCE,
    InstanceWeightedMNRL,
    MarginNegationLoss,
    RecallRegularizer,
)
from tests.conftest import load_tiny_model

BATCH = 6
TOLERANCE = 1e-10


def _texts(sentences: list[str], layout: str) -> list[list[str]]:
    rows = [sentences[i * BATCH : (i + 1) * BATCH] for i in range(4)]
    if layout == "pair":
        return rows[:2]
    if layout == "triplet":
        return rows[:3]
    if layout == "four":
        return rows
    if layout == "negation":
        anchors = rows[0]
        return [
            anchors,
            [" ".join(s.split()[:-1]) + "." for s in anchors],
            ["It is not true that " + s[0].lower() + s[1:] for s in anchors],
        ]
    raise ValueError(layout)


def _median_guide_cosine(guide, texts: list[list[str]]) -> float:
    """A guide threshold φ that masks about half of the anchor-candidate pairs (a random BERT's cosines are all high)."""
    with torch.no_grad():
        anchors = guide.encode(texts[0], convert_to_tensor=True, batch_size=BATCH)
        candidates = guide.encode(texts[1], convert_to_tensor=True, batch_size=BATCH)
    similarity = (
        torch.nn.functional.normalize(anchors, dim=-1) @ torch.nn.functional.normalize(candidates, dim=-1).T
    )
    return float(similarity[~torch.eye(BATCH, dtype=torch.bool)].median())


def _guide_labels(guide, texts: list[list[str]]) -> torch.Tensor:
    """Per row: a weight, then the guide embedding of every column (labels="weights_and_guide_embeddings")."""
    weights = torch.linspace(0.5, 1.5, BATCH, dtype=torch.float64).unsqueeze(1)
    with torch.no_grad():
        embeddings = [guide.encode(column, convert_to_tensor=True, batch_size=BATCH) for column in texts]
    return torch.cat([weights, *embeddings], dim=1)


# name -> (layout, build(model, guide, mini_batch_size, threshold) -> (uncached, cached), labels(guide, texts) or None)
CASES: dict[str, tuple[str, Callable, Callable | None]] = {
    "focal": (
        "triplet",
        lambda model, guide, m, phi: (
            FocalInfoNCE(model, margin=0.3),
            CachedFocalInfoNCE(model, m, margin=0.3),
        ),
        None,
    ),
    "dclr-live-guide-noise": (
        "pair",
        lambda model, guide, m, phi: (
            InstanceWeightedMNRL(model, guide=guide, threshold=phi, noise_ratio=1.0),
            CachedInstanceWeightedMNRL(model, m, guide=guide, threshold=phi, noise_ratio=1.0),
        ),
        None,
    ),
    "dclr-precomputed-guide": (
        "triplet",
        lambda model, guide, m, phi: (
            InstanceWeightedMNRL(model, threshold=phi, labels="weights_and_guide_embeddings"),
            CachedInstanceWeightedMNRL(model, m, threshold=phi, labels="weights_and_guide_embeddings"),
        ),
        _guide_labels,
    ),
    "debcse": (
        "four",
        lambda model, guide, m, phi: (
            DebiasInfoNCE(model, in_batch_negatives="both"),
            CachedDebiasInfoNCE(model, m, in_batch_negatives="both"),
        ),
        None,
    ),
    "osscse-dropout": (
        "negation",
        lambda model, guide, m, phi: (
            MarginNegationLoss(model, margin_weight=0.5, alpha=0.1, beta=0.1, return_parts=True),
            CachedMarginNegationLoss(model, m, margin_weight=0.5, alpha=0.1, beta=0.1, return_parts=True),
        ),
        None,
    ),
    "osscse-negation-views": (
        "negation",
        lambda model, guide, m, phi: (
            MarginNegationLoss(
                model, margin_weight=0.5, dropout_columns=("anchor", "negation"), contrastive_weight=0.5, return_parts=True
            ),
            CachedMarginNegationLoss(
                model, m, margin_weight=0.5, dropout_columns=("anchor", "negation"), contrastive_weight=0.5, return_parts=True
            ),
        ),
        None,
    ),
    "osscse-paraphrase": (
        "negation",
        lambda model, guide, m, phi: (
            MarginNegationLoss(model, contrastive="paraphrase", margin_weight=0.5, alpha=0.1, beta=0.1),
            CachedLoss(
                model,
                MarginNegationLoss(model, contrastive="paraphrase", margin_weight=0.5, alpha=0.1, beta=0.1),
                m,
            ),
        ),
        None,
    ),
}


@pytest.fixture
def float64_models(tiny_model, tiny_bert_dir: Path):
    """The tiny model and a guide (its twin with other weights), both in float64."""
    torch.manual_seed(1)
    guide = load_tiny_model(tiny_bert_dir)
    with torch.no_grad():
        for parameter in guide.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    return tiny_model.double(), guide.double()


def _weighted_total(output) -> torch.Tensor:
    """A combination that is not the plain sum: per-part gradients must be exact, not only their sum's."""
    if not isinstance(output, dict):
        return output
    return sum((index + 2.0) * part for index, part in enumerate(output.values()))


def _step(model, loss, features, labels, seed: int) -> tuple[dict[str, float], list[torch.Tensor]]:
    """Loss parts and parameter gradients of one forward/backward, from a fixed random state."""
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    output = loss([dict(f) for f in features], labels)
    _weighted_total(output).backward()
    parts = output if isinstance(output, dict) else {"loss": output}
    gradients = [p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]
    return {name: part.item() for name, part in parts.items()}, gradients


def _assert_same(expected, actual) -> None:
    (expected_parts, expected_gradients), (actual_parts, actual_gradients) = expected, actual
    assert expected_parts.keys() == actual_parts.keys()
    for name in expected_parts:
        assert abs(expected_parts[name] - actual_parts[name]) < TOLERANCE, (
            name,
            expected_parts,
            actual_parts,
        )
    norm = sum(g.abs().sum() for g in expected_gradients)
    assert norm > 1e-6, "no gradient reached the model: the comparison would prove nothing"
    for index, (e, a) in enumerate(zip(expected_gradients, actual_gradients)):
        assert torch.allclose(e, a, rtol=1e-8, atol=TOLERANCE), (
            f"parameter {index}: max diff {(e - a).abs().max()}"
        )


@pytest.mark.parametrize("mini_batch_size", [4, BATCH, 10], ids=["smaller", "equal", "larger"])
@pytest.mark.parametrize("case", list(CASES))
def test_cached_equals_uncached(case, mini_batch_size, float64_models, wiki_sentences):
    """Dropout off: same loss (each part) and same parameter gradients as the uncached loss, whether the
    batch splits unevenly (4 + 2 rows), exactly, or fits in one mini-batch."""
    model, guide = float64_models
    layout, build, make_labels = CASES[case]
    texts = _texts(wiki_sentences, layout)
    labels = make_labels(guide, texts) if make_labels else None
    features = [model.preprocess(column) for column in texts]
    uncached, cached = build(model, guide, mini_batch_size, _median_guide_cosine(guide, texts))
    model.eval()
    _assert_same(
        _step(model, uncached, features, labels, seed=5), _step(model, cached, features, labels, seed=5)
    )


def _replayed_reference(
    model, loss, features, labels, mini_batch_size: int, seed: int, guide_embeddings=None
):
    """The uncached loss on embeddings computed with gradients in the same mini-batches, in the same order,
    from the same seed: what the cached loss must reproduce when dropout is on."""
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    embeddings = []
    for feature in features:
        chunks = [
            model(_create_minibatch(feature, begin, end))["sentence_embedding"]
            for begin, end in _minibatch_ranges(feature, mini_batch_size)
        ]
        embeddings.append(torch.cat(chunks))
    extra = {} if guide_embeddings is None else {"guide_embeddings": guide_embeddings}
    output = loss.compute_loss_from_embeddings(embeddings, labels, **extra)
    _weighted_total(output).backward()
    parts = output if isinstance(output, dict) else {"loss": output}
    gradients = [p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]
    return {name: part.item() for name, part in parts.items()}, gradients


@pytest.mark.parametrize("case", ["focal", "dclr-live-guide-noise", "debcse", "osscse-dropout", "osscse-negation-views"])
def test_replayed_dropout_gives_exact_gradients(case, float64_models, wiki_sentences):
    """Dropout on: the second pass replays the first pass's dropout masks, so the gradients are those of
    the embeddings the loss saw. A replay with fresh masks would fail this by far more than 1e-10."""
    model, guide = float64_models
    layout, build, _ = CASES[case]
    texts = _texts(wiki_sentences, layout)
    features = [model.preprocess(column) for column in texts]
    uncached, cached = build(model, guide, 4, _median_guide_cosine(guide, texts))
    all_features = uncached.input_columns(features) if case.startswith("osscse") else features
    guide_embeddings = (
        uncached._embed_with_guide([dict(f) for f in features]) if case.startswith("dclr") else None
    )
    model.train()
    reference = _replayed_reference(
        model, uncached, all_features, None, 4, seed=9, guide_embeddings=guide_embeddings
    )
    _assert_same(reference, _step(model, cached, features, None, seed=9))
    model.eval()
    without_dropout, _ = _step(model, cached, features, None, seed=9)
    assert without_dropout != reference[0], "dropout changed nothing: the replay was not tested"


def test_no_grad_returns_the_uncached_value(float64_models, wiki_sentences):
    """Evaluation (no grad) computes the loss in mini-batches without registering any backward hook."""
    model, guide = float64_models
    features = [model.preprocess(column) for column in _texts(wiki_sentences, "triplet")]
    model.eval()
    with torch.no_grad():
        expected = FocalInfoNCE(model)([dict(f) for f in features])
        actual = CachedFocalInfoNCE(model, mini_batch_size=4)([dict(f) for f in features])
    assert not actual.requires_grad
    assert abs(expected.item() - actual.item()) < TOLERANCE


def test_recall_regularizer_around_the_cached_loss(float64_models, wiki_sentences):
    """RecallRegularizer(CachedMarginNegationLoss) = RecallRegularizer(MarginNegationLoss): the recall term's
    parameter gradient is added by autograd next to the replayed embedding gradients."""
    model, _ = float64_models
    features = [model.preprocess(column) for column in _texts(wiki_sentences, "negation")]
    uncached = RecallRegularizer(
        model, MarginNegationLoss(model, margin_weight=0.5, return_parts=True), 0.1, return_parts=True
    )
    cached = RecallRegularizer(
        model,
        CachedMarginNegationLoss(model, 4, margin_weight=0.5, return_parts=True),
        0.1,
        return_parts=True,
    )
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.01)  # the recall term is non-zero
    model.eval()
    _assert_same(_step(model, uncached, features, None, seed=3), _step(model, cached, features, None, seed=3))


def test_trainer_step(tiny_model, tiny_bert_dir: Path, wiki_sentences, tmp_path: Path):
    """One SentenceTransformerTrainer step per cached loss: the hook runs inside the trainer's backward
    (gradient scaling, zero_grad) and the weights change; dict parts are logged."""
    guide = load_tiny_model(tiny_bert_dir)
    threshold = _median_guide_cosine(guide, _texts(wiki_sentences, "pair"))
    builds = {
        "pair": lambda model: CachedInstanceWeightedMNRL(
            model, mini_batch_size=3, guide=guide, noise_ratio=1.0, threshold=threshold
        ),
        "four": lambda model: CachedDebiasInfoNCE(model, mini_batch_size=4),
        "negation": lambda model: RecallRegularizer(
            model,
            CachedMarginNegationLoss(model, mini_batch_size=4, margin_weight=1.0, return_parts=True),
            return_parts=True,
        ),
        "triplet": lambda model: CachedFocalInfoNCE(model, mini_batch_size=4),
    }
    for layout, build in builds.items():
        columns = {f"column_{i}": values for i, values in enumerate(_texts(wiki_sentences, layout))}
        before = [p.detach().clone() for p in tiny_model.parameters()]
        args = SentenceTransformerTrainingArguments(
            output_dir=str(tmp_path / layout),
            per_device_train_batch_size=BATCH,
            max_steps=1,
            learning_rate=1e-3,
            save_strategy="no",
            report_to="none",
            logging_steps=1,
            disable_tqdm=True,
        )
        loss = build(tiny_model)
        trainer = SentenceTransformerTrainer(
            model=tiny_model, args=args, train_dataset=Dataset.from_dict(columns), loss=loss
        )
        trainer.train()
        changed = sum(not torch.equal(b, p) for b, p in zip(before, tiny_model.parameters()))
        assert changed > 0, f"{layout}: no parameter changed"
        if layout == "negation":
            logged = {key for entry in trainer.state.log_history for key in entry}
            assert {"contrastive", "margin", "recall"} <= logged, logged


def test_config_and_citation(tiny_model):
    """The model card gets mini_batch_size and the wrapped loss's settings, and both citations."""
    config = CachedFocalInfoNCE(tiny_model, mini_batch_size=8, margin=0.1).get_config_dict()
    assert config["mini_batch_size"] == 8 and config["margin"] == 0.1 and "scale" in config
    generic = CachedLoss(tiny_model, DebiasInfoNCE(tiny_model, batch_norm="per_column"), mini_batch_size=4)
    config = generic.get_config_dict()
    assert config == json.loads(json.dumps(config))
    assert (
        config["loss"] == "DebiasInfoNCE"
        and config["loss.batch_norm"] == "per_column"
        and config["mini_batch_size"] == 4
    )
    citation = CachedMarginNegationLoss(tiny_model).citation
    assert "gao2021scaling" in citation and "shi2023osscse" in citation


def test_invalid_setups_raise(tiny_model, tiny_bert_dir: Path):
    """Guards against silently wrong training: a recall term inside the cache (its parameter gradient would be
    dropped), a wrapped loss on another model (gradients to the wrong weights), a zero mini-batch size, and
    training a model=None loss."""
    with pytest.raises(ValueError, match="RecallRegularizer"):
        CachedLoss(tiny_model, RecallRegularizer(tiny_model, FocalInfoNCE(tiny_model)))
    with pytest.raises(ValueError, match="same model"):
        CachedLoss(tiny_model, FocalInfoNCE(load_tiny_model(tiny_bert_dir)))
    with pytest.raises(ValueError, match="mini_batch_size"):
        CachedFocalInfoNCE(tiny_model, mini_batch_size=0)
    with pytest.raises(ValueError, match="model=None"):
        CachedFocalInfoNCE(None)([tiny_model.preprocess(["a", "b"])] * 2)


MATRYOSHKA_DIMS = [128, 64, 32]


@pytest.mark.parametrize("case", ["focal", "dclr-live-guide-noise", "dclr-precomputed-guide", "debcse", "osscse-paraphrase"])
def test_cached_inside_matryoshka_equals_uncached_inside_matryoshka(case, float64_models, wiki_sentences):
    """Every cached loss refused MatryoshkaLoss, though sentence-transformers' own cached loss works inside it.
    Now MatryoshkaLoss decorates calculate_loss, as for CachedMultipleNegativesRankingLoss: the loss at every
    dimension and the parameter gradients equal MatryoshkaLoss around the uncached loss (dropout off)."""
    model, guide = float64_models
    layout, build, make_labels = CASES[case]
    texts = _texts(wiki_sentences, layout)
    labels = make_labels(guide, texts) if make_labels else None
    features = [model.preprocess(column) for column in texts]
    uncached, cached = build(model, guide, 4, _median_guide_cosine(guide, texts))
    model.eval()
    expected = _step(model, MatryoshkaLoss(model, uncached, MATRYOSHKA_DIMS), features, labels, seed=3)
    actual = _step(model, MatryoshkaLoss(model, cached, MATRYOSHKA_DIMS), features, labels, seed=3)
    _assert_same(expected, actual)
    full_only = _step(model, cached.loss, features, labels, seed=3)[0]["loss"]
    assert abs(actual[0]["loss"] - full_only) > 1e-6, "the smaller dimensions added nothing: not tested"


def test_dict_parts_inside_matryoshka_are_summed(float64_models, wiki_sentences):
    """A loss returning named parts (CachedMarginNegationLoss, return_parts=True) gives their sum per dimension."""
    model, _ = float64_models
    features = [model.preprocess(column) for column in _texts(wiki_sentences, "negation")]
    kwargs = {"margin_weight": 0.5, "alpha": 0.1, "beta": 0.1, "contrastive": "paraphrase"}
    model.eval()
    expected = _step(model, MatryoshkaLoss(model, MarginNegationLoss(model, **kwargs), MATRYOSHKA_DIMS), features, None, 3)
    cached = CachedMarginNegationLoss(model, 4, return_parts=True, **kwargs)
    _assert_same(expected, _step(model, MatryoshkaLoss(model, cached, MATRYOSHKA_DIMS), features, None, 3))


def test_combinations_that_cannot_work_fail_at_construction_naming_the_order(tiny_model, wiki_sentences):
    """MatryoshkaLoss(RecallRegularizer(m, Cached...)) died in backward ('inconsistent tensor size');
    CachedLoss(m, SimilarityPreservation(...)) was accepted and failed at the first step."""
    from sentence_transformers.sentence_transformer.losses import AdaptiveLayerLoss

    from st_debias.losses import SimilarityPreservation

    recall = RecallRegularizer(tiny_model, CachedFocalInfoNCE(tiny_model, 2))
    with pytest.raises(ValueError, match=r"RecallRegularizer\(model, MatryoshkaLoss\(model, CachedFocalInfoNCE"):
        MatryoshkaLoss(tiny_model, recall, MATRYOSHKA_DIMS)
    with pytest.raises(ValueError, match=r"around the uncached loss: SimilarityPreservation\(model, FocalInfoNCE"):
        CachedLoss(tiny_model, SimilarityPreservation(tiny_model, FocalInfoNCE(tiny_model)))
    with pytest.raises(ValueError, match=r"Wrap the uncached loss: SimilarityPreservation\(model, FocalInfoNCE"):
        SimilarityPreservation(tiny_model, CachedFocalInfoNCE(tiny_model, 2))
    features = [tiny_model.preprocess(wiki_sentences[:4]) for _ in range(2)]
    with pytest.warns(UserWarning, match="AdaptiveLayerLoss is not compatible"):
        adaptive = AdaptiveLayerLoss(tiny_model, CachedFocalInfoNCE(tiny_model, 2))
    with pytest.raises(ValueError, match="Use AdaptiveLayerLoss around the uncached loss"):
        adaptive(features, None)


def test_recall_outside_matryoshka_of_a_cached_loss_trains(tiny_model, wiki_sentences):
    """The order the error names works: one backward pass reaches the parameters."""
    loss = RecallRegularizer(
        tiny_model, MatryoshkaLoss(tiny_model, CachedFocalInfoNCE(tiny_model, 2), MATRYOSHKA_DIMS), gamma=1.0
    )
    features = [tiny_model.preprocess(wiki_sentences[:4]) for _ in range(2)]
    tiny_model.zero_grad(set_to_none=True)
    value = loss(features, None)
    value.backward()
    assert torch.isfinite(value)
    assert sum(float(p.grad.abs().sum()) for p in tiny_model.parameters() if p.grad is not None) > 0


def _distributed_worker(rank: int, store: str, model_dir: str, out_dir: str) -> None:
    """One of two gloo processes: uncached and cached losses with gather_across_devices on its half batch."""
    import sys

    import torch.distributed as dist

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.conftest import first_sentences

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        model = load_tiny_model(Path(model_dir)).double().eval()
        texts = [column[rank * 3 : rank * 3 + 3] for column in _texts(first_sentences(4 * BATCH), "negation")]
        features = [model.preprocess(column) for column in texts]
        pairs = {
            "focal": (
                FocalInfoNCE(model, gather_across_devices=True),
                CachedFocalInfoNCE(model, 2, gather_across_devices=True),
            ),
            "debcse": (
                DebiasInfoNCE(model, gather_across_devices=True),
                CachedDebiasInfoNCE(model, 2, gather_across_devices=True),
            ),
            "osscse": (
                MarginNegationLoss(
                    model, contrastive="paraphrase", gather_across_devices=True, return_parts=True
                ),
                CachedMarginNegationLoss(
                    model, 2, contrastive="paraphrase", gather_across_devices=True, return_parts=True
                ),
            ),
        }
        results = {
            name: (_step(model, u, features, None, 0), _step(model, c, features, None, 0))
            for name, (u, c) in pairs.items()
        }
        results["local-only"] = _step(model, CachedFocalInfoNCE(model, 2), features, None, 0)[0]
        torch.save(results, str(Path(out_dir) / f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


@pytest.mark.timeout(300)
def test_gather_across_devices_under_the_cache(tiny_bert_dir: Path, tmp_path: Path):
    """Two CPU processes (gloo): with gather_across_devices, the cached losses gather the cached embeddings of
    both processes in step 2 and give each process the same loss and parameter gradients as the uncached
    loss. Guards against a cache that silently trains each process on its local half-batch only."""
    import torch.multiprocessing as mp

    mp.spawn(
        _distributed_worker,
        args=(str(tmp_path / "store"), str(tiny_bert_dir), str(tmp_path)),
        nprocs=2,
        join=True,
    )
    for rank in range(2):
        results = torch.load(tmp_path / f"rank{rank}.pt")
        local_only = results.pop("local-only")
        for uncached, cached in results.values():
            _assert_same(uncached, cached)
        # Sanity: the gather happened (3 local rows against 6 candidates), so it changes the loss.
        assert abs(local_only["loss"] - results["focal"][1][0]["loss"]) > 1e-6


@pytest.mark.parametrize("build", [CachedFocalInfoNCE, CachedMarginNegationLoss], ids=["focal", "margin-negation"])
def test_an_empty_batch_is_a_clear_error(build, tiny_model):
    """Guards against a bare StopIteration from an empty batch in the cached losses."""
    columns = 2 if build is CachedFocalInfoNCE else 3
    with pytest.raises(ValueError, match=r"empty batch \(0 rows\)"):
        build(tiny_model, mini_batch_size=2)([tiny_model.preprocess([]) for _ in range(columns)])
