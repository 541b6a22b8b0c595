"""Slow float64 oracles, written straight from each paper's equation.

Every function loops explicitly over rows and candidates with Python floats (``math.exp`` /
``math.log`` / ``math.fsum``). Nothing here imports ``st_debias``: a bug shared by the loss and its
oracle would otherwise pass unnoticed. Where a paper leaves a choice open, the oracle follows the
decision written in ``docs/losses/`` and the loss docstrings, and says so.

Conventions: ``tau`` is the temperature (sentence-transformers' ``scale = 1 / tau``); embeddings are
``(B, d)`` tensors or nested lists; "columns" are (anchor, positive, negative_1, ..., negative_n).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Matrix = list[list[float]]


# -- scalar helpers ---------------------------------------------------------------------------------
def _rows(x) -> Matrix:
    """A tensor (any dtype) or nested sequence as a list of rows of Python floats."""
    if hasattr(x, "detach"):
        x = x.detach().double().cpu().tolist()
    return [[float(v) for v in row] for row in x]


def _dot(u: Sequence[float], v: Sequence[float]) -> float:
    return math.fsum(a * b for a, b in zip(u, v))


def _norm(u: Sequence[float]) -> float:
    return math.sqrt(_dot(u, u))


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    """cos(u, v) = u·v / (‖u‖‖v‖)."""
    return _dot(u, v) / (_norm(u) * _norm(v))


def _log_sum_exp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def _reduce(per_row: list[float], reduction: str) -> float | list[float]:
    if reduction == "none":
        return per_row
    if reduction == "mean":
        return math.fsum(per_row) / len(per_row)
    if reduction == "sum":
        return math.fsum(per_row)
    raise ValueError(reduction)


# -- Focal-InfoNCE, Hou & Li 2023, eq. 2 -----------------------------------------------------------
def focal_infonce_reference(
    anchors, positives, negatives: Sequence = (), tau: float = 0.05, m: float = 0.3, reduction: str = "mean"
):
    """l_i = −log e^{(s_p^i)²/τ} / ( Σ_{j≠i} e^{s_n^{ij}(s_n^{ij}+m)/τ} + e^{(s_p^i)²/τ} ).

    s_p^i = cos(anchor_i, positive_i); the negatives j ≠ i are the other rows' positives (the
    two-view cosine matrix of the reference code) plus — the natural extension of docs/losses/focal_infonce.md — every
    row's hard negatives, with the same s(s+m) modulation. Mean over rows (reference code's reduction).
    """
    a, p = _rows(anchors), _rows(positives)
    negs = [_rows(n) for n in negatives]
    per_row = []
    for i in range(len(a)):
        s_p = cosine(a[i], p[i])
        positive_term = s_p * s_p / tau
        terms = [positive_term]
        for j in range(len(p)):
            if j != i:
                s_n = cosine(a[i], p[j])
                terms.append(s_n * (s_n + m) / tau)
        for column in negs:
            for j in range(len(column)):
                s_n = cosine(a[i], column[j])
                terms.append(s_n * (s_n + m) / tau)
        per_row.append(_log_sum_exp(terms) - positive_term)
    return _reduce(per_row, reduction)


# -- DCLR, Zhou et al. 2022, eq. 5–6 (noise: §4.1 eq. 1–4) ----------------------------------------
def dclr_weights_reference(anchor_guide, candidate_guides: Sequence, threshold: float) -> list[list[float]]:
    """α_{i,c} of eq. 5: 0 where sim_C(h_i, h⁻) ≥ φ else 1, for every candidate column (flattened)."""
    a = _rows(anchor_guide)
    flat = [row for column in candidate_guides for row in _rows(column)]
    return [[0.0 if cosine(a[i], c) >= threshold else 1.0 for c in flat] for i in range(len(a))]


def dclr_reference(
    anchors,
    positives,
    negatives: Sequence = (),
    tau: float = 0.05,
    guide: Sequence | None = None,
    threshold: float = 0.9,
    row_weights: Sequence[float] | None = None,
    noise=None,
    reduction: str = "mean",
):
    """Eq. 6 with true masking: l_i = −log e^{s_p/τ} / ( e^{s_p/τ} + Σ_{h⁻} α_{h⁻} e^{s(h_i,h⁻)/τ} ).

    Candidates h⁻: every row's positive except row i's own, every row's hard negatives, then the
    ``noise`` vectors (weight 1: the guide cannot embed them, docs/losses/instance_weighted_mnrl.md). ``guide`` = one guide
    embedding tensor per column (anchor first); α from :func:`dclr_weights_reference`. The positive
    is never masked. Batch loss L = Σ_i w_i l_i / B (unit weights when ``row_weights`` is None).
    """
    a, p = _rows(anchors), _rows(positives)
    negs = [_rows(n) for n in negatives]
    extra = _rows(noise) if noise is not None else []
    batch = len(a)
    flat = p + [row for column in negs for row in column]
    alpha = (
        dclr_weights_reference(guide[0], list(guide[1:]), threshold)
        if guide is not None
        else [[1.0] * len(flat) for _ in range(batch)]
    )
    weights = [1.0] * batch if row_weights is None else [float(w) for w in row_weights]
    per_row = []
    for i in range(batch):
        positive_logit = cosine(a[i], p[i]) / tau
        terms = [positive_logit]
        for c, candidate in enumerate(flat):
            if c == i:  # the positive itself, already in and never masked
                continue
            if alpha[i][c] == 0.0:  # α = 0: the candidate leaves the denominator
                continue
            terms.append(cosine(a[i], candidate) / tau)
        for vector in extra:
            terms.append(cosine(a[i], vector) / tau)
        per_row.append(weights[i] * (_log_sum_exp(terms) - positive_logit))
    return _reduce(per_row, reduction)


def _cosine_gradient_wrt_second(u: Sequence[float], v: Sequence[float]) -> list[float]:
    """∂cos(u, v)/∂v = u / (‖u‖‖v‖) − cos(u, v) · v / ‖v‖²."""
    nu, nv = _norm(u), _norm(v)
    c = _dot(u, v) / (nu * nv)
    return [ui / (nu * nv) - c * vi / (nv * nv) for ui, vi in zip(u, v)]


def dclr_noise_reference(anchors, positives, initial_noise, steps: int, beta: float, tau: float) -> Matrix:
    """DCLR §4.1: t steps of ĥ_j ← ĥ_j + β g(ĥ_j)/‖g(ĥ_j)‖₂ with g = ∇_{ĥ_j} L_U (eq. 3–4).

    L_U is the batch-mean InfoNCE of the anchors against [positives | noise] (docs/losses/instance_weighted_mnrl.md: the
    reference code's candidate set and the main τ). The gradient is written out by hand:
    ∂L_U/∂ĥ_j = (1/B) Σ_i softmax_i(ĥ_j) · (1/τ) · ∂cos(h_i, ĥ_j)/∂ĥ_j — no autograd.
    """
    a, p = _rows(anchors), _rows(positives)
    noise = _rows(initial_noise)
    batch = len(a)
    for _ in range(steps):
        gradients = [[0.0] * len(vector) for vector in noise]
        for i in range(batch):
            logits = [cosine(a[i], c) / tau for c in p] + [cosine(a[i], v) / tau for v in noise]
            log_z = _log_sum_exp(logits)
            for j, vector in enumerate(noise):
                probability = math.exp(logits[len(p) + j] - log_z)
                d_cos = _cosine_gradient_wrt_second(a[i], vector)
                for k in range(len(vector)):
                    gradients[j][k] += probability * d_cos[k] / (tau * batch)
        updated = []
        for vector, g in zip(noise, gradients):
            g_norm = _norm(g)
            updated.append([v + beta * gk / g_norm for v, gk in zip(vector, g)])
        noise = updated
    return noise


# -- DebCSE, Miao et al. 2023, eq. 7–9 -------------------------------------------------------------
def batch_norm_reference(columns: Sequence[Matrix], eps: float = 1e-5) -> list[Matrix]:
    """z = (h − μ) / √(σ² + eps) per feature; μ, σ² (biased) over every row of every given column."""
    rows = [row for column in columns for row in column]
    dim = len(rows[0])
    mean = [math.fsum(r[k] for r in rows) / len(rows) for k in range(dim)]
    var = [math.fsum((r[k] - mean[k]) ** 2 for r in rows) / len(rows) for k in range(dim)]
    return [
        [[(r[k] - mean[k]) / math.sqrt(var[k] + eps) for k in range(dim)] for r in column]
        for column in columns
    ]


def debcse_reference(
    anchors,
    positives,
    negatives: Sequence = (),
    tau: float = 0.05,
    in_batch: str = "counterpart",
    positive_in_denominator: bool = True,
    batch_norm: str = "joint",
    symmetric: bool = True,
    eps: float = 1e-5,
):
    """𝓛 = L(z_{x_i}, h_{x_i⁺}) + L(z_{x_i⁺}, h_{x_i}) (eq. 7), each L averaged over rows, with

    L(z_a, h_p) = −log e^{cos(z_a,h_p)/τ} / ( [e^{cos(z_a,h_p)/τ}] + Σ_k e^{cos(z_a, z_{x_i^{−,k}})/τ}
                                              + Σ_{j≠i} e^{cos(z_a, z_j)/τ} )      (eq. 8–9)

    Decisions (loss docstring): the bracketed positive term when ``positive_in_denominator``; z_j of
    the other rows' "counterpart" side (term 1: z_{x_j⁺}, term 2: z_{x_j}), the "same" side, or
    "both"; k over the row's own mined negatives only; BatchNorm without affine, biased variance,
    the batch's own statistics, over all columns together ("joint") or column by column.
    """
    h = [_rows(anchors), _rows(positives)] + [_rows(n) for n in negatives]
    z = (
        batch_norm_reference(h, eps)
        if batch_norm == "joint"
        else [batch_norm_reference([c], eps)[0] for c in h]
    )
    batch = len(h[0])

    def term(query: Matrix, target: Matrix, counterpart: Matrix, same: Matrix) -> float:
        sides = {"counterpart": [counterpart], "same": [same], "both": [counterpart, same]}[in_batch]
        per_row = []
        for i in range(batch):
            positive_logit = cosine(query[i], target[i]) / tau
            terms = [positive_logit] if positive_in_denominator else []
            for negative in z[2:]:
                terms.append(cosine(query[i], negative[i]) / tau)
            for side in sides:
                for j in range(batch):
                    if j != i:
                        terms.append(cosine(query[i], side[j]) / tau)
            per_row.append(_log_sum_exp(terms) - positive_logit)
        return math.fsum(per_row) / batch

    total = term(z[0], h[1], z[1], z[0])
    if symmetric:
        total += term(z[1], h[0], z[0], z[1])
    return total


# -- OssCSE, Shi et al. 2023, eq. 3–5 ----------------------------------------------------------------
def infonce_reference(anchors, positives, tau: float = 0.05) -> float:
    """SimCSE / MNRL: mean_i −log e^{s(a_i,p_i)/τ} / Σ_j e^{s(a_i,p_j)/τ} (in-batch negatives only)."""
    a, p = _rows(anchors), _rows(positives)
    per_row = []
    for i in range(len(a)):
        logits = [cosine(a[i], p[j]) / tau for j in range(len(p))]
        per_row.append(_log_sum_exp(logits) - logits[i])
    return math.fsum(per_row) / len(per_row)


def osscse_margin_reference(anchors, paraphrases, negations, alpha: float = 0.05, beta: float = 0.2) -> float:
    """l_m = mean_i U_m^i, U_m = max(s(h,hⁿ) − s(h,hᵖ) + α, 0) + max(s(h,hᵖ) − s(h,hⁿ) − β, 0) (eq. 3)."""
    a, p, n = _rows(anchors), _rows(paraphrases), _rows(negations)
    per_row = []
    for i in range(len(a)):
        s_p, s_n = cosine(a[i], p[i]), cosine(a[i], n[i])
        per_row.append(max(s_n - s_p + alpha, 0.0) + max(s_p - s_n - beta, 0.0))
    return math.fsum(per_row) / len(per_row)


def osscse_reference(
    anchors,
    paraphrases,
    negations,
    dropout_view=None,
    alpha: float = 0.05,
    beta: float = 0.2,
    margin_weight: float = 1e-3,
    contrastive: str | None = "dropout",
    tau: float = 0.05,
    column_views=None,
    contrastive_weight: float = 1.0,
) -> dict[str, float]:
    """The parts of eq. 5 without l_r: {"contrastive": w·l_c, "margin": λ·l_m}.

    l_c is SimCSE's InfoNCE of the anchor against its second dropout view ("dropout") or its
    paraphrase ("paraphrase"), in-batch negatives only; absent when ``contrastive`` is None.
    ``column_views`` ({column: its second dropout view}) takes SimCSE's term on those columns instead
    of the anchor: one InfoNCE per column, each against its own view, named "contrastive_<column>".
    """
    parts = {}
    named = {"anchor": anchors, "paraphrase": paraphrases, "negation": negations}
    if column_views is not None:
        for column, view in column_views.items():
            parts[f"contrastive_{column}"] = contrastive_weight * infonce_reference(named[column], view, tau)
    elif contrastive == "dropout":
        parts["contrastive"] = contrastive_weight * infonce_reference(anchors, dropout_view, tau)
    elif contrastive == "paraphrase":
        parts["contrastive"] = contrastive_weight * infonce_reference(anchors, paraphrases, tau)
    parts["margin"] = margin_weight * osscse_margin_reference(anchors, paraphrases, negations, alpha, beta)
    return parts


def recall_reference(parameters: Sequence, start_values: Sequence, gamma: float) -> float:
    """l_r = ½·γ·Σ_i (θ_i − θ*_i)² over every scalar of every parameter (eq. 4)."""
    squares = []
    for theta, theta_star in zip(parameters, start_values):
        flat = theta.detach().double().reshape(-1).tolist()
        flat_star = theta_star.detach().double().reshape(-1).tolist()
        assert len(flat) == len(flat_star)
        squares.extend((t - s) ** 2 for t, s in zip(flat, flat_star))
    return 0.5 * gamma * math.fsum(squares)


def similarity_drift_reference(current, reference) -> float:
    """Mean over ordered pairs i != j of (cos(h_i, h_j) - cos(h*_i, h*_j))^2 (SimilarityPreservation)."""
    current, reference = _rows(current), _rows(reference)
    n = len(current)
    if n < 2:
        return 0.0
    total = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                total += (cosine(current[i], current[j]) - cosine(reference[i], reference[j])) ** 2
    return total / (n * (n - 1))


# -- Text metrics and DebCSE inverse-propensity sampling, §4.1–4.2, eq. 1–6 -------------------------
def reference_words(text: str) -> list[str]:
    """Lower-cased words with punctuation removed: maximal runs of letters/digits (``str.isalnum``), one
    straight or curly apostrophe joining two runs ("don't")."""
    text = text.lower()
    out: list[str] = []
    i = 0
    while i < len(text):
        if not text[i].isalnum():
            i += 1
            continue
        end = i
        while end < len(text) and text[end].isalnum():
            end += 1
        if end + 1 < len(text) and text[end] in "'’" and text[end + 1].isalnum():
            end += 1
            while end < len(text) and text[end].isalnum():
                end += 1
        out.append(text[i:end])
        i = end
    return out


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Unit-cost insert/delete/substitute distance between two sequences (Wagner–Fischer table)."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def word_edit_reference(a: str, b: str) -> float:
    """The edit of eq. 1 as decided in docs/builders/ipw.md: word Levenshtein / longer word count."""
    wa, wb = reference_words(a), reference_words(b)
    longer = max(len(wa), len(wb))
    return levenshtein(wa, wb) / longer if longer else 0.0


def mer_bounds_reference(reference: str, hypothesis: str) -> tuple[float, float]:
    """(lowest, highest) MER = (S+D+I)/(S+D+I+C) over all minimum-edit word alignments (Morris et al. 2004).

    MER depends on the alignment (ref "a b" → hyp "b c": two substitutions give 1, delete-keep-insert
    gives 2/3), so the oracle returns the range; S+D+I+C = len(ref) + I, so each alignment is summed up
    by its insertion count. Table cell: (distance, set of insertion counts of the optimal alignments).
    """
    ref, hyp = reference_words(reference), reference_words(hypothesis)
    if not ref and not hyp:
        return 0.0, 0.0
    table = [[(j, {j}) for j in range(len(hyp) + 1)]]
    for i in range(1, len(ref) + 1):
        row = [(i, {0})]
        for j in range(1, len(hyp) + 1):
            moves = [
                (table[i - 1][j - 1][0] + (ref[i - 1] != hyp[j - 1]), table[i - 1][j - 1][1], 0),  # match/sub
                (table[i - 1][j][0] + 1, table[i - 1][j][1], 0),  # deletion
                (row[j - 1][0] + 1, row[j - 1][1], 1),  # insertion
            ]
            best = min(cost for cost, _, _ in moves)
            row.append(
                (best, {count + extra for cost, counts, extra in moves if cost == best for count in counts})
            )
        table.append(row)
    distance, insertions = table[-1][-1]
    values = [distance / (len(ref) + count) for count in insertions]
    return min(values), max(values)


def lexical_overlap_reference(a: str, b: str) -> float:
    """Shared words (with multiplicity) / the longer sentence's word count (DebCSE Tables 1 and 4)."""
    wa, wb = reference_words(a), reference_words(b)
    longer = max(len(wa), len(wb))
    if not longer:
        return 0.0
    unmatched = list(wb)
    shared = 0
    for word in wa:
        if word in unmatched:
            unmatched.remove(word)
            shared += 1
    return shared / longer


def _softmax(values: Sequence[float], tau: float = 1.0) -> list[float]:
    top = max(v / tau for v in values)
    exps = [math.exp(v / tau - top) for v in values]
    total = math.fsum(exps)
    return [e / total for e in exps]


def propensity_reference(
    edits: Sequence[float],
    cosines: Sequence[float],
    lam: float,
    kind: str,
    tau: float = 1.0,
    tau_s: float = 1.0,
) -> list[float]:
    """P_neg (eq. 1–4, ``kind="negative"``) or P_pos (eq. 1–2, 5–6, ``kind="positive"``) over one pool.

    S_sur = 1 − softmax(edit/T_s) (eq. 1), S_sem = softmax(cos/T_s) (eq. 2);
    P̃_neg = (1−λ_n)·S_sur + λ_n·(1−S_sem) (eq. 3), P̃_pos = (1−λ_p)·(1−S_sur) + λ_p·S_sem (eq. 5);
    P = softmax(P̃/T) (eq. 4, 6).
    """
    s_sur = [1.0 - p for p in _softmax(edits, tau_s)]
    s_sem = _softmax(cosines, tau_s)
    if kind == "negative":
        raw = [(1.0 - lam) * sur + lam * (1.0 - sem) for sur, sem in zip(s_sur, s_sem)]
    elif kind == "positive":
        raw = [(1.0 - lam) * (1.0 - sur) + lam * sem for sur, sem in zip(s_sur, s_sem)]
    else:
        raise ValueError(kind)
    return _softmax(raw, tau)


def successive_sample_reference(probabilities: Sequence[float], m: int, gumbel: Sequence[float]) -> list[int]:
    """m indices drawn without replacement in proportion to ``probabilities`` (Plackett–Luce), with the
    Gumbel-max trick made explicit: each draw takes the remaining index with the largest log p + g."""
    remaining = [j for j, p in enumerate(probabilities) if p > 0]
    chosen = []
    for _ in range(min(m, len(remaining))):
        best = max(remaining, key=lambda j: math.log(probabilities[j]) + gumbel[j])
        chosen.append(best)
        remaining.remove(best)
    return chosen
