"""Bias probes: Cont/Oppn rule and split sizes, negation probe, alignment/uniformity, pair statistics."""

from __future__ import annotations

import numpy as np
import pytest

from st_debias.data.text import match_error_rate
from st_debias.evaluation.bias import (
    alignment_uniformity,
    cont_oppn_scores,
    cont_oppn_split,
    negation_probe,
)
from st_debias.evaluation.bias_data import load_negation_pairs
from st_debias.evaluation.embeddings import EmbeddingCache
from st_debias.evaluation.pairs import training_pair_statistics
from st_debias.evaluation.sts_data import STSData, load_sts

# OssCSE Table 2 and the sizes the MER of docs/evaluation.md gives here.
OSSCSE_TABLE2 = {"STSBenchmark": (855, 524), "STSBenchmark-train": (3532, 2217)}
EXPECTED_HERE = {"STSBenchmark": (868, 511), "STSBenchmark-train": (3593, 2156)}


def _slow_rule(s1, s2, scores):
    """The OssCSE rule written out pair by pair (oracle)."""
    mer = [match_error_rate(a, b) for a, b in zip(s1, s2, strict=True)]
    ms, mm = float(np.median(scores)), float(np.median(mer))
    cont = []
    for i, (score, m) in enumerate(zip(scores, mer, strict=True)):
        if (score > ms and m < mm) or (score < ms and m > mm):
            cont.append(i)
    return cont


def test_rule_matches_explicit_loop_and_ties_go_to_oppn():
    s1 = ["a b c d", "a b c d", "a b c d", "a b c d", "a b c d"]
    s2 = ["a b c d", "a b x y", "w x y z", "a b c y", "a x y z"]
    scores = [4.0, 1.0, 3.0, 0.5, 5.0]  # median score 3.0 (pair 2 sits on it)
    split = cont_oppn_split(s1, s2, scores)
    assert split.cont.tolist() == _slow_rule(s1, s2, scores)
    assert 2 in split.oppn.tolist(), "a pair on the median score is not Cont"
    assert sorted(split.cont.tolist() + split.oppn.tolist()) == list(range(5))
    assert split.median_score == 3.0 and split.eligible


@pytest.mark.parametrize("name", ["STSBenchmark", "STSBenchmark-train"])
def test_split_sizes_reproduce_osscse_table2(shared_data, name):
    """STSB-test 868/511, STSB-train 3593/2156: within 5% (actually 3%) of OssCSE's 855/524, 3532/2217.

    The difference comes from the MER tokenisation (lower-cased words, punctuation removed, on SentEval's
    tokenised text); OssCSE does not state theirs.
    """
    data = load_sts(name, shared_data)
    split = cont_oppn_split(data.sentences1, data.sentences2, data.scores)
    sizes = (split.cont.size, split.oppn.size)
    assert sizes == EXPECTED_HERE[name]
    for ours, paper in zip(sizes, OSSCSE_TABLE2[name], strict=True):
        assert abs(ours - paper) / paper <= 0.05
    assert split.eligible


def test_sick_and_sts12_are_not_eligible(shared_data):
    """Median gold outside [2, 3.5] (SICK 3.6, STS12 3.8): no Cont/Oppn Spearman is reported."""
    for name in ("SICK-R", "STS12"):
        data = load_sts(name, shared_data)
        result = cont_oppn_scores(data, np.zeros(len(data)))
        assert result["eligible"] is False
        assert result["cont"]["spearman"] is None and result["oppn"]["spearman"] is None


def test_cont_oppn_scores_are_spearman_on_each_part():
    s1 = [f"w{i} a b c" for i in range(8)]
    s2 = [f"w{i} a b c" if i % 2 else f"v{i} x y c" for i in range(8)]
    scores = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]
    cos = np.linspace(0, 1, 8) ** 2
    data = STSData("t", s1, s2, scores, source="test")
    split = cont_oppn_split(s1, s2, scores)
    result = cont_oppn_scores(data, cos, split)
    from scipy.stats import spearmanr

    for part, index in (("cont", split.cont), ("oppn", split.oppn)):
        assert result[part]["pairs"] == index.size
        if index.size >= 2:
            expected = 100 * spearmanr(cos[index], np.asarray(scores)[index])[0]
            assert result[part]["spearman"] == pytest.approx(expected)


def test_negation_probe_numbers(fake_encoder_cls, tmp_path):
    (tmp_path / "a.tsv").write_text(
        "sentence\tnegated\tparaphrase\ns1\tn1\tp1\ns2\tn2\t\ns3\tn3\tp3\n", encoding="utf-8"
    )
    table = {
        "s1": [1, 0], "n1": [0.9, np.sqrt(1 - 0.81)], "p1": [0.5, np.sqrt(0.75)],
        "s2": [1, 0], "n2": [0.5, np.sqrt(0.75)],
        "s3": [1, 0], "n3": [0.7, np.sqrt(1 - 0.49)], "p3": [0.95, np.sqrt(1 - 0.9025)],
    }  # fmt: skip
    pairs = load_negation_pairs(folder=tmp_path, limit=None)
    result = negation_probe(EmbeddingCache(fake_encoder_cls(table, dim=2)), pairs)
    assert result["mean_cosine"] == pytest.approx((0.9 + 0.5 + 0.7) / 3, abs=1e-6)
    assert result["share_above"] == pytest.approx(1 / 3)
    assert result["paraphrase_pairs"] == 2
    assert result["negation_outranks_paraphrase"] == pytest.approx(0.5)
    assert sum(result["histogram"]["counts"]) == 3
    assert len(result["histogram"]["edges"]) == len(result["histogram"]["counts"]) + 1


def test_alignment_uniformity_match_explicit_formulas(fake_encoder_cls):
    rng = np.random.default_rng(0)
    names = [f"s{i}" for i in range(6)]
    table = {n: rng.normal(size=3).tolist() for n in names}
    data = STSData("t", names[:3], names[3:], [4.5, 2.0, 5.0], source="test")
    result = alignment_uniformity(EmbeddingCache(fake_encoder_cls(table, dim=3)), data)
    unit = {n: np.asarray(v) / np.linalg.norm(v) for n, v in table.items()}
    align = np.mean([np.sum((unit[a] - unit[b]) ** 2) for a, b in (("s0", "s3"), ("s2", "s5"))])
    pairs = [(i, j) for i in range(6) for j in range(i + 1, 6)]
    uniform = np.log(np.mean([np.exp(-2 * np.sum((unit[names[i]] - unit[names[j]]) ** 2)) for i, j in pairs]))
    assert result["alignment"] == pytest.approx(align, abs=1e-6)
    assert result["uniformity"] == pytest.approx(uniform, abs=1e-6)
    assert result["positive_pairs"] == 2 and result["sentences"] == 6


def test_training_pair_statistics_simcse_and_explicit_negatives(fake_encoder_cls):
    """SimCSE rows (anchor = positive) give overlap 1.0 on positives; explicit negatives are used when given."""
    simcse = [
        ("the cat sat", "the cat sat"),
        ("a dog ran home", "a dog ran home"),
        ("birds fly", "birds fly"),
    ]
    stats = training_pair_statistics(simcse)
    assert stats["lexical_overlap"]["positive"] == 1.0
    assert stats["negative_kind"].startswith("in-batch")
    # in-batch: (the cat sat, a dog ran home) 0; (a dog ran home, birds fly) 0; (birds fly, the cat sat) 0
    assert stats["lexical_overlap"]["negative"] == 0.0
    rows = [
        {"anchor": "the cat sat", "positive": "the cat was sitting", "negative": "the cat stood"},
        {"anchor": "a b c d", "positive": "a b c e", "negative": "x y z w"},
    ]
    stats = training_pair_statistics(rows, guide=fake_encoder_cls())
    assert stats["negative_kind"] == "explicit" and stats["negative_pairs"] == 2
    assert stats["lexical_overlap"]["positive"] == pytest.approx((2 / 4 + 3 / 4) / 2)
    assert stats["lexical_overlap"]["negative"] == pytest.approx((2 / 3 + 0) / 2)
    assert -1 <= stats["guide_cosine"]["positive"] <= 1


def test_training_pair_statistics_accepts_hf_dataset():
    from datasets import Dataset

    ds = Dataset.from_dict({"anchor": ["a b", "c d"], "positive": ["a b", "c e"]})
    stats = training_pair_statistics(ds)
    assert stats["rows"] == 2 and stats["lexical_overlap"]["positive"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="≥ 2 rows"):
        training_pair_statistics([("only", "one")])


def test_oppn_sides_partition_the_oppn_pairs():
    """Each Oppn pair is on one side or on a median; counts, Spearman and mean cosine per side."""
    s1 = ["a b c d"] * 9
    s2 = ["a b c d", "a b c x", "a b x y", "a x y z", "w x y z", "a b c x", "a x y z", "w x y z", "a b x y"]
    scores = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]
    cos = np.linspace(0.1, 0.9, 9)
    split = cont_oppn_split(s1, s2, scores)
    mer = np.array([match_error_rate(a, b) for a, b in zip(s1, s2, strict=True)])
    ms, mm = np.median(scores), np.median(mer)
    expected_high = [i for i in split.oppn if mer[i] < mm and scores[i] < ms]
    expected_low = [i for i in split.oppn if mer[i] > mm and scores[i] > ms]
    assert split.high_overlap_low_score.tolist() == expected_high and expected_high
    assert split.low_overlap_high_score.tolist() == expected_low and expected_low
    result = cont_oppn_scores(STSData("t", s1, s2, scores, source="test"), cos, split)
    sides = result["oppn_sides"]
    assert (
        sides["high_overlap_low_score"]["pairs"]
        + sides["low_overlap_high_score"]["pairs"]
        + sides["on_median"]
        == result["oppn"]["pairs"]
    )
    for side, index in (("high_overlap_low_score", expected_high), ("low_overlap_high_score", expected_low)):
        assert sides[side]["mean_cosine"] == pytest.approx(cos[index].mean())
        if len(index) >= 2:
            from scipy.stats import spearmanr

            expected = 100 * spearmanr(cos[index], np.asarray(scores)[index])[0]
            assert sides[side]["spearman"] == pytest.approx(expected)
        else:
            assert sides[side]["spearman"] is None, "Spearman of one pair is undefined"


def test_oppn_sides_on_stsb_test(shared_data):
    """STS-B test: the 511 Oppn pairs split into the two sides plus the pairs on a median."""
    data = load_sts("STSBenchmark", shared_data)
    result = cont_oppn_scores(data, np.arange(len(data), dtype=float))
    sides = result["oppn_sides"]
    assert result["oppn"]["pairs"] == 511
    assert (
        sides["high_overlap_low_score"]["pairs"]
        + sides["low_overlap_high_score"]["pairs"]
        + sides["on_median"]
        == 511
    )
    assert sides["high_overlap_low_score"]["pairs"] > 50 and sides["low_overlap_high_score"]["pairs"] > 50


def test_word_order_shuffle_is_seeded_and_counts_skips():
    from st_debias.evaluation.bias import shuffle_word_order

    sentences = ["one two three", "the cat sat on the mat .", "a a a a", "four words are here"]
    pairs = shuffle_word_order(sentences, seed=3)
    assert pairs.skipped_short == 1 and pairs.skipped_unchanged == 1, (
        "too short; no shuffle changes 'a a a a'"
    )
    assert pairs.sentences == ["the cat sat on the mat .", "four words are here"]
    for original, shuffled in zip(pairs.sentences, pairs.shuffled, strict=True):
        assert shuffled != original and sorted(shuffled.split()) == sorted(original.split())
    assert shuffle_word_order(sentences, seed=3) == pairs
    alone = shuffle_word_order(["four words are here"], seed=3)
    assert alone.shuffled == pairs.shuffled[1:], "a sentence's shuffle does not depend on the others"
    assert shuffle_word_order(sentences, seed=4).shuffled != pairs.shuffled


def test_word_order_probe_numbers(fake_encoder_cls):
    from st_debias.evaluation.bias import WordOrderPairs, word_order_probe

    table = {"s1": [1, 0], "x1": [0.95, np.sqrt(1 - 0.9025)], "s2": [1, 0], "x2": [0.5, np.sqrt(0.75)]}
    pairs = WordOrderPairs(
        ["s1", "s2"], ["x1", "x2"], skipped_short=3, skipped_unchanged=0, seed=0, min_words=4
    )
    result = word_order_probe(EmbeddingCache(fake_encoder_cls(table, dim=2)), pairs)
    assert result["mean_cosine"] == pytest.approx(0.725, abs=1e-6)
    assert result["share_above"] == pytest.approx(0.5) and result["threshold"] == 0.9
    assert result["pairs"] == 2 and result["skipped_short"] == 3
    assert sum(result["histogram"]["counts"]) == 2
    with pytest.raises(ValueError, match="3 sentences shorter than 4"):
        word_order_probe(EmbeddingCache(fake_encoder_cls()), WordOrderPairs([], [], 3, 0, 0, 4))


def _items(rows):
    from st_debias.evaluation.bias_data import NegationMeaningItems

    columns = list(zip(*rows, strict=True))
    return NegationMeaningItems(
        *map(list, columns), lines=list(range(len(rows))), source="x", line_range=(1, len(rows)), declined={}
    )


def test_negation_meaning_probe_against_a_float64_reference():
    """(i), (ii) and (iii) computed pair by pair from their definitions, on random embeddings."""
    from st_debias.evaluation.bias import mean_offdiagonal_cosine, negation_meaning_probe
    from tests.evaluation.conftest import FakeEncoder

    rng = np.random.default_rng(3)
    rows = [(f"a{i}", f"not a{i}", f"b{i}", f"not b{i}") for i in range(7)]
    table = {text: rng.normal(size=5).tolist() for row in rows for text in row}
    out = negation_meaning_probe(EmbeddingCache(FakeEncoder(table)), _items(rows))

    def cos(x, y):
        u, v = np.asarray(table[x], dtype=np.float64), np.asarray(table[y], dtype=np.float64)
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    first = np.mean([cos(na, b) > cos(na, a) for a, na, b, _ in rows])
    second = np.mean([cos(na, b) > cos(na, nb) for _, na, b, nb in rows])
    pairs = [(i, j) for i in range(7) for j in range(7) if i != j]
    negated = np.mean([cos(rows[i][1], rows[j][1]) for i, j in pairs])
    affirmative = np.mean([cos(rows[i][0], rows[j][0]) for i, j in pairs])
    assert out["items"] == 7
    assert out["paraphrase_over_affirmative"] == pytest.approx(first)
    assert out["paraphrase_over_negated_antonym"] == pytest.approx(second)
    assert out["polarity_cluster"] == pytest.approx(negated - affirmative, abs=1e-5)
    assert out["negated_pairs_mean_cosine"] == pytest.approx(negated, abs=1e-5)
    assert set(out["by_antonym_kind"]) == {"other_word"}  # "a0"/"b0": no prefix
    x = np.asarray([table[r[0]] for r in rows])
    assert mean_offdiagonal_cosine(x) == pytest.approx(affirmative, abs=1e-12)
    with pytest.raises(ValueError):
        mean_offdiagonal_cosine(x[:1])


def test_negation_meaning_without_direction_against_a_float64_reference():
    """Each half's direction, its removal and the three figures computed item by item from their definitions, on
    random embeddings with an odd number of items; the probe reports the same block, and only from four items."""
    from st_debias.evaluation.bias import negation_meaning_probe, negation_meaning_without_direction
    from tests.evaluation.conftest import FakeEncoder

    rng = np.random.default_rng(11)
    count, dim = 9, 6
    a, n, b, nb = (rng.normal(size=(count, dim)) for _ in range(4))
    n += 0.8  # a shared shift of every negation, for a direction worth removing
    nb += 0.8

    def dot(x, y):
        return sum(float(p) * float(q) for p, q in zip(x, y, strict=True))

    def cos(x, y):
        return dot(x, y) / (dot(x, x) * dot(y, y)) ** 0.5

    first, second, clusters, lengths = [], [], [], []
    for side in (0, 1):
        fitted = [k for k in range(count) if k % 2 != side]
        differences = [n[k] - a[k] for k in fitted] + [nb[k] - b[k] for k in fitted]
        mean = [sum(d[j] for d in differences) / len(differences) for j in range(dim)]
        length = dot(mean, mean) ** 0.5
        lengths.append(length)
        u = [m / length for m in mean]

        def removed(v, u=u):
            along = dot(v, u)
            return [v[j] - along * u[j] for j in range(dim)]

        scored = [k for k in range(count) if k % 2 == side]
        for k in scored:
            nk, ak, bk, nbk = removed(n[k]), removed(a[k]), removed(b[k]), removed(nb[k])
            first.append(cos(nk, bk) > cos(nk, ak))
            second.append(cos(nk, bk) > cos(nk, nbk))
        pairs = [(k, m) for k in scored for m in scored if k != m]
        negated = sum(cos(removed(n[k]), removed(n[m])) for k, m in pairs) / len(pairs)
        affirmative = sum(cos(removed(a[k]), removed(a[m])) for k, m in pairs) / len(pairs)
        clusters.append(negated - affirmative)

    out = negation_meaning_without_direction(a, n, b, nb)
    assert out == {
        "paraphrase_over_affirmative": pytest.approx(np.mean(first)),
        "paraphrase_over_negated_antonym": pytest.approx(np.mean(second)),
        "polarity_cluster": pytest.approx(np.mean(clusters), abs=1e-12),
        "direction_length": pytest.approx(np.mean(lengths), abs=1e-12),
    }
    assert 0.0 < out["paraphrase_over_affirmative"] < 1.0  # a reference that can tell items apart

    unit = np.concatenate([a, n, b, nb])
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    names = [f"{column}{k}" for column in ("a", "not a", "b", "not b") for k in range(count)]
    table = dict(zip(names, unit.tolist(), strict=True))
    rows = [(f"a{k}", f"not a{k}", f"b{k}", f"not b{k}") for k in range(count)]
    probe = negation_meaning_probe(EmbeddingCache(FakeEncoder(table)), _items(rows))
    expected = negation_meaning_without_direction(*(unit[k * count:(k + 1) * count] for k in range(4)))
    assert probe["without_negation_direction"] == pytest.approx(expected, abs=1e-6)
    assert "without_negation_direction" not in negation_meaning_probe(
        EmbeddingCache(FakeEncoder(table)), _items(rows[:3])
    )
    with pytest.raises(ValueError, match="at least four items"):
        negation_meaning_without_direction(a[:3], n[:3], b[:3], nb[:3])


def test_removing_the_common_direction_shows_the_meaning_under_it():
    """"not A" = 0.45·B + 0.2·A + 2u and "not B" = 0.45·A + 0.2·B + 2u, and "A" carries u too: as scored, "not A" is
    nearer "A" and "not B" (the shared u), and negated sentences cluster; with u removed, "not A" is nearer "B" and
    the cluster is gone."""
    from st_debias.evaluation.bias import negation_meaning_probe
    from tests.evaluation.conftest import FakeEncoder

    rng = np.random.default_rng(0)
    dim, count = 512, 400  # enough items that each half's estimate of u is close to u

    def unit(x):
        return x / np.linalg.norm(x)

    u = unit(rng.normal(size=dim))
    table, rows = {}, []
    for k in range(count):
        a, b = (unit(rng.normal(size=dim)) for _ in range(2))
        row = (f"a{k}", f"not a{k}", f"b{k}", f"not b{k}")
        for name, vector in zip(row, (a + u, 0.45 * b + 0.2 * a + 2 * u, b, 0.45 * a + 0.2 * b + 2 * u), strict=True):
            table[name] = unit(vector).tolist()
        rows.append(row)
    out = negation_meaning_probe(EmbeddingCache(FakeEncoder(table)), _items(rows))
    assert out["paraphrase_over_affirmative"] == 0.0 and out["paraphrase_over_negated_antonym"] == 0.0
    assert out["polarity_cluster"] > 0.2
    removed = out["without_negation_direction"]
    assert removed["paraphrase_over_affirmative"] == 1.0
    assert removed["paraphrase_over_negated_antonym"] == 1.0  # not B = 0.45·A + 0.2·B once u is gone
    assert abs(removed["polarity_cluster"]) < 0.05
    assert removed["direction_length"] > 0.1


def test_negation_meaning_probe_by_antonym_kind_against_a_float64_reference():
    """(i) and (ii) on the prefixed items ("able"/"unable") and on the others, each from its definition."""
    from st_debias.evaluation.bias import negation_meaning_probe
    from tests.evaluation.conftest import FakeEncoder

    rng = np.random.default_rng(5)
    words = [("able", "unable"), ("legal", "illegal"), ("large", "small"), ("possible", "impossible"), ("high", "low"),
             ("deep", "shallow"), ("known", "unknown")]
    rows = [(f"it{i} is {a}", f"it{i} is not {a}", f"it{i} is {b}", f"it{i} is not {b}") for i, (a, b) in enumerate(words)]
    table = {text: rng.normal(size=5).tolist() for row in rows for text in row}
    out = negation_meaning_probe(EmbeddingCache(FakeEncoder(table)), _items(rows))

    def cos(x, y):
        u, v = np.asarray(table[x], dtype=np.float64), np.asarray(table[y], dtype=np.float64)
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    for kind, indices in (("prefixed", [0, 1, 3, 6]), ("other_word", [2, 4, 5])):
        chosen = [rows[i] for i in indices]
        assert out["by_antonym_kind"][kind] == {
            "items": len(indices),
            "paraphrase_over_affirmative": pytest.approx(np.mean([cos(na, b) > cos(na, a) for a, na, b, _ in chosen])),
            "paraphrase_over_negated_antonym": pytest.approx(np.mean([cos(na, b) > cos(na, nb) for _, na, b, nb in chosen])),
        }


def test_negation_meaning_probe_tells_meaning_from_the_not_feature():
    """A model whose embedding is 'content + polarity feature' fails (ii) and clusters negations; one that
    maps 'not A' onto B passes both."""
    from st_debias.evaluation.bias import negation_meaning_probe
    from tests.evaluation.conftest import FakeEncoder

    rng = np.random.default_rng(0)
    rows = [(f"a{i}", f"not a{i}", f"b{i}", f"not b{i}") for i in range(6)]
    feature, meaning = {}, {}
    for a, na, b, nb in rows:
        content, sense = rng.normal(size=8), rng.normal(size=8)
        polarity = np.zeros(8)
        polarity[0] = 6.0
        feature.update({a: content + sense, na: content + sense + polarity, b: content - sense,
                        nb: content - sense + polarity})
        meaning.update({a: content + sense, na: content - sense, b: content - sense, nb: content + sense})
    as_feature = negation_meaning_probe(EmbeddingCache(FakeEncoder({k: v.tolist() for k, v in feature.items()})),
                                        _items(rows))
    as_meaning = negation_meaning_probe(EmbeddingCache(FakeEncoder({k: v.tolist() for k, v in meaning.items()})),
                                        _items(rows))
    assert as_feature["paraphrase_over_negated_antonym"] == 0.0 and as_feature["polarity_cluster"] > 0.2
    assert as_meaning["paraphrase_over_negated_antonym"] == 1.0 and as_meaning["paraphrase_over_affirmative"] == 1.0
    assert abs(as_meaning["polarity_cluster"]) < as_feature["polarity_cluster"]
    with pytest.raises(ValueError):
        negation_meaning_probe(EmbeddingCache(FakeEncoder({k: v.tolist() for k, v in meaning.items()})),
                               _items(rows[:1]))
