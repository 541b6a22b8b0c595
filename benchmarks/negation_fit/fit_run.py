"""A short ``st-debias`` version 6 run whose loss is split by row group: what each term does to the other-word rows.

    python benchmarks/negation_fit/fit_run.py --steps 100 --seed 42 --work-dir outputs/negation_fit/v6-seed42 \
        --out benchmarks/negation_fit/results/fit_run.json

Trains the packaged recipe through ``train_recipe`` (its rows, sampler, optimiser, recall regulariser and last
checkpoint) with one change: the loss returns its terms split by the rows' group (:data:`rows.GROUPS`), so that the
trainer's sum is the same loss. The margin term λ·(1/N)·Σ_i U_i becomes one part per group (λ/N times the sum of
that group's U_i); the dropout InfoNCE term (1/N)·Σ_i ℓ_i likewise, each row's ℓ_i being its query's loss against
the batch's views; the recall term stays whole. ``GradientAlignment`` (``GradientShareCallback`` with cosines) then
gives, every ``--every`` steps, each part's gradient norm over the trainable weights, its share of the sum of norms,
and the cosine of its gradient with the whole step's and with each other part's. Each training step also records,
per group, the rows in the batch, their margin gap s(anchor, positive) − s(anchor, negative) (dropout on) and the
shares below α (lower hinge active), inside [α, β] (zero gradient) and above β. Before and after the run, the
start and trained models score every row's gap and the quadruples' (ii) in eval mode (``rows.row_gaps``,
``rows.quadruple_cosines``). ``--zero margin_minimal_pair`` trains the same run without the minimal pairs' margin
(the counterfactual of the study README).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from benchmarks.harness.provenance import command_line, write_stamped_json
from benchmarks.negation_fit.rows import (
    GROUPS,
    quadruple_cosines,
    recipe_at,
    row_gaps,
    row_groups,
    training_rows,
)
from st_debias.recipes.callbacks import GradientShareCallback


class GradientAlignment(GradientShareCallback):
    """``GradientShareCallback`` that also logs, on its measured steps, the cosine of each part's gradient with the
    sum of all parts' (the step's gradient before Adam: ``grad_cos_total/<part>``) and with every other part's
    (``grad_cos/<part>|<part>``). One flat copy of the gradient per part is held while measuring."""

    def _after_forward(self, module: nn.Module, inputs: Any, output: Any) -> None:
        if not (self._measure and torch.is_grad_enabled() and isinstance(output, dict)):
            return
        self._measure = False
        params = self._trainable()
        flat = {}
        for name, value in output.items():
            grads = (
                torch.autograd.grad(value, params, retain_graph=True, allow_unused=True)
                if value.requires_grad else [None] * len(params)
            )
            flat[name] = torch.cat([
                (g if g is not None else torch.zeros_like(p)).detach().float().flatten() for g, p in zip(grads, params)
            ])
        total = sum(flat.values())
        norms = {name: float(g.norm()) for name, g in flat.items()}
        norm_sum = sum(norms.values())

        def cosine(a: Tensor, b: Tensor) -> float:
            scale = float(a.norm() * b.norm())
            return float(a @ b) / scale if scale > 0 else 0.0

        names = list(flat)
        entry = {f"grad_norm/{k}": v for k, v in norms.items()}
        entry.update({f"grad_share/{k}": (v / norm_sum if norm_sum > 0 else 0.0) for k, v in norms.items()})
        entry["grad_norm/total"] = float(total.norm())
        entry.update({f"grad_cos_total/{k}": cosine(g, total) for k, g in flat.items()})
        entry.update({
            f"grad_cos/{a}|{b}": cosine(flat[a], flat[b]) for i, a in enumerate(names) for b in names[i + 1 :]
        })
        self._pending = entry


class RowGroupParts(nn.Module):
    """``RecallRegularizer(MarginNegationLoss)`` with its margin and contrastive terms returned per row group.

    ``keys`` maps a row's (anchor token ids, negative token ids) to its group. The parts sum to the wrapped loss
    (checked on the first batch: ``max_sum_difference``). The parts named in ``zero`` are multiplied by 0 (a
    counterfactual run without them)."""

    def __init__(
        self, loss: Any, keys: dict[tuple[tuple[int, ...], tuple[int, ...]], str], zero: tuple[str, ...] = ()
    ) -> None:
        super().__init__()
        self.loss = loss
        self.margin_loss = loss.loss
        self.model = loss.model
        self.keys = keys
        self.zero = zero
        self.steps: list[dict[str, Any]] = []
        self.max_sum_difference: float | None = None

    @staticmethod
    def _ids(column: dict[str, Tensor]) -> list[tuple[int, ...]]:
        return [tuple(ids[mask.bool()].tolist()) for ids, mask in zip(column["input_ids"], column["attention_mask"])]

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> dict[str, Tensor]:
        features = list(sentence_features)
        groups = [self.keys.get(key, "unmatched") for key in zip(self._ids(features[0]), self._ids(features[2]))]
        inner = self.margin_loss
        embeddings = inner.embed(inner.input_columns(features))
        anchor, positive, negative, view = (e.float() for e in embeddings)
        rows = anchor.size(0)
        margins = inner.row_margins(anchor, positive, negative)
        logits = inner.similarity_fct(anchor, view) * inner.scale
        contrastive = nn.functional.cross_entropy(logits, torch.arange(rows), reduction="none")
        parts: dict[str, Tensor] = {}
        for group in GROUPS:
            mask = torch.tensor([g == group for g in groups])
            parts[f"margin_{group}"] = inner.margin_weight * margins[mask].sum() / rows
            parts[f"contrastive_{group}"] = inner.contrastive_weight * contrastive[mask].sum() / rows
        parts["recall"] = self.loss.recall()
        if self.max_sum_difference is None:
            whole = self.loss.compute_loss_from_embeddings(embeddings)
            whole = sum(whole.values()) if isinstance(whole, dict) else whole
            self.max_sum_difference = float((sum(parts.values()) - whole).detach().abs())
        for name in self.zero:
            parts[name] = parts[name] * 0.0
        if torch.is_grad_enabled():
            self.steps.append(self._record(groups, margins.detach(), anchor.detach(), positive.detach(), negative.detach()))
        return parts

    def _record(self, groups: list[str], margins: Tensor, anchor: Tensor, positive: Tensor, negative: Tensor) -> dict:
        cos = nn.functional.cosine_similarity
        gap = (cos(anchor, positive) - cos(anchor, negative)).numpy()
        alpha, beta = self.margin_loss.alpha, self.margin_loss.beta
        kinds = np.asarray(groups)
        entry: dict[str, Any] = {"unmatched": int((kinds == "unmatched").sum())}
        for group in GROUPS:
            g, u = gap[kinds == group], margins.numpy()[kinds == group]
            entry[group] = {
                "rows": int(g.size), "mean_gap": float(g.mean()) if g.size else None,
                "below_alpha": float((g < alpha).mean()) if g.size else None,
                "in_window": float(((g >= alpha) & (g <= beta)).mean()) if g.size else None,
                "above_beta": float((g > beta).mean()) if g.size else None,
                "mean_u": float(u.mean()) if g.size else None,
            }
        return entry

    def get_config_dict(self) -> dict[str, Any]:
        return self.loss.get_config_dict()

    @property
    def citation(self) -> str:
        return self.loss.citation


def row_keys(rows: Any, groups: list[str], model: Any) -> dict[tuple[tuple[int, ...], tuple[int, ...]], str]:
    """(anchor ids, negative ids) → group, tokenised as the trainer's collator does (``model.preprocess``)."""
    columns = rows.column_names[:3]

    def ids(texts: list[str]) -> list[tuple[int, ...]]:
        batch = model.preprocess(texts)
        return RowGroupParts._ids(batch)

    return dict(zip(zip(ids(rows[columns[0]]), ids(rows[columns[2]])), groups, strict=True))


def fit_figures(rows: Any, groups: list[str], sentences: list[str], model: Any, alpha: float, beta: float) -> dict:
    """The rows' margin gaps and the quadruples' cosines, at the training length, in eval mode."""
    own = model.max_seq_length
    model.max_seq_length = 32
    try:
        return {"gaps": row_gaps(rows, groups, model, alpha, beta), "quadruples": quadruple_cosines(sentences, model)}
    finally:
        model.max_seq_length = own


def shares_by_step(log_history: list[dict[str, Any]], every: int) -> list[dict[str, Any]]:
    """What ``GradientAlignment`` logged, by the step it was logged at (measured on the batch of the step after
    the preceding multiple of ``every``: steps 1, 11, 21, ... for every 10, counted from 1)."""
    entries = [e for e in log_history if any(k.startswith("grad_share/") for k in e)]
    return [
        {"measured_step": (e["step"] - 1) // every * every + 1, **{k: v for k, v in e.items() if k.startswith("grad_")}}
        for e in entries
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--every", type=int, default=10, help="measure the gradient shares every N steps")
    parser.add_argument(
        "--zero", nargs="*", default=[], metavar="PART",
        help="parts to multiply by 0 (e.g. margin_minimal_pair): a counterfactual run without them",
    )
    parser.add_argument("--work-dir", type=Path, default=Path("outputs/negation_fit/v6-seed42"))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/negation_fit/results/fit_run.json"))
    args = parser.parse_args(argv)
    parts = {f"{term}_{group}" for term in ("margin", "contrastive") for group in GROUPS} | {"recall"}
    if unknown := sorted(set(args.zero) - parts):
        parser.error(f"unknown parts {unknown}; choose from {sorted(parts)}")

    import st_debias.recipes.train as train_module
    from st_debias.paths import load_model
    from st_debias.recipes import train_recipe

    recipe = recipe_at(args.steps, args.seed)
    params = recipe.loss.params
    start = load_model(None)
    rows, _, sentences = training_rows(recipe, start)
    groups = row_groups(rows, sentences)
    before = fit_figures(rows, groups, sentences, start, params["alpha"], params["beta"])
    held: list[RowGroupParts] = []
    build_loss = train_module.build_loss

    callbacks: list[Any] = []  # read by the trainer after the loss is built, so filled in split_loss

    def split_loss(spec: Any, model: Any, built: Any, **kwargs: Any) -> tuple[Any, Any]:
        loss, built = build_loss(spec, model, built, **kwargs)
        if built["anchor"] != rows["anchor"]:
            raise SystemExit("the trainer's rows are not the rows rows.py builds")
        held.append(RowGroupParts(loss, row_keys(built, groups, model), tuple(args.zero)))
        callbacks.append(GradientAlignment(held[-1], every=args.every))
        return held[-1], built

    train_module.build_loss = split_loss  # the one seam: train_recipe builds its loss through this name
    try:
        result = train_recipe(
            recipe, output_dir=args.work_dir, evaluate=False, show_progress_bar=False, overwrite=True,
            callbacks=callbacks,
        )
    finally:
        train_module.build_loss = build_loss
    (loss,) = held
    trained = load_model(str(result.model_dir))
    record = {
        "command": command_line(__file__, argv),
        "recipe": {"name": recipe.name, "version": recipe.version, "steps": args.steps, "seed": args.seed},
        "zeroed_parts": list(args.zero),
        "hinge": {"alpha": params["alpha"], "beta": params["beta"], "margin_weight": params["margin_weight"]},
        "max_sum_difference": loss.max_sum_difference,
        "steps": loss.steps,
        "gradient_shares": shares_by_step(result.log_history, args.every),
        "start": before,
        "trained": fit_figures(rows, groups, sentences, trained, params["alpha"], params["beta"]),
    }
    write_stamped_json(args.out, record, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
