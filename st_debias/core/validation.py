"""Input checks shared by the losses, with errors that name the problem."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def check_num_columns(embeddings: list[Tensor], minimum: int, maximum: int | None, loss_name: str, layout: str) -> None:
    """Raise ``ValueError`` when the number of input columns is outside ``[minimum, maximum]``, the columns differ
    in rows or have none, or an embedding holds NaN or inf (which gave a finite loss with NaN gradients)."""
    count = len(embeddings)
    if count < minimum or (maximum is not None and count > maximum):
        expected = f"{minimum}" if maximum == minimum else f"{minimum}..{maximum if maximum is not None else 'n'}"
        raise ValueError(
            f"{loss_name} expects {expected} input columns ({layout}), got {count}. "
            "Check the dataset's column order and remove extra columns (ids, metadata) that are not text."
        )
    sizes = {e.size(0) for e in embeddings}
    if len(sizes) != 1:
        raise ValueError(f"{loss_name}: all input columns must have the same number of rows, got sizes {sorted(sizes)}.")
    check_not_empty(embeddings[0].size(0), loss_name)
    # One host-device synchronisation per call on an accelerator; the columns are searched only on failure.
    if not bool(torch.stack([torch.isfinite(e).all() for e in embeddings]).all()):
        check_finite(embeddings, "input embeddings", loss_name)


def check_not_empty(rows: int, loss_name: str) -> None:
    """Raise ``ValueError`` for a batch of 0 rows (a mean over no row is NaN; an empty loop has no first item)."""
    if rows == 0:
        raise ValueError(
            f"{loss_name}: got an empty batch (0 rows), which has no loss. Drop empty batches before the loss "
            "(the trainer's dataloader_drop_last=True does for a short last batch)."
        )


def check_row_weights(weights: Tensor, batch_size: int, loss_name: str) -> Tensor:
    """Validate per-row weights: shape ``(B,)``, finite, non-negative. Returns them flattened."""
    weights = weights.reshape(-1)
    if weights.numel() != batch_size:
        raise ValueError(f"{loss_name}: expected one weight per row ({batch_size}), got {weights.numel()} values.")
    if torch.isnan(weights).any():
        raise ValueError(f"{loss_name}: row weights contain NaN (rows {torch.isnan(weights).nonzero().flatten().tolist()}).")
    if torch.isinf(weights).any():
        raise ValueError(f"{loss_name}: row weights contain inf.")
    if (weights < 0).any():
        raise ValueError(f"{loss_name}: row weights must be non-negative, got min {weights.min().item():.4g}.")
    return weights


def check_finite(tensors: list[Tensor], what: str, loss_name: str) -> None:
    """Raise when any tensor holds NaN or inf, naming the first offending column and rows."""
    for column, tensor in enumerate(tensors):
        bad_rows = (~torch.isfinite(tensor)).reshape(tensor.size(0), -1).any(dim=1)
        if bad_rows.any():
            raise ValueError(
                f"{loss_name}: {what} contain NaN or inf (column {column}, rows {bad_rows.nonzero().flatten().tolist()})."
            )


def check_finite_number(value: float, name: str, loss_name: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value)):
        raise ValueError(f"{loss_name}: {name} must be a finite number, got {value!r}.")


def check_positive(value: float, name: str, loss_name: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{loss_name}: {name} must be a positive finite number, got {value!r}.")


def check_non_negative(value: float, name: str, loss_name: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{loss_name}: {name} must be a non-negative finite number, got {value!r}.")
