"""One identity for a model's weights, shared by the embedding, row and evaluation caches and MTEB revisions."""

from __future__ import annotations

import hashlib

import torch


def model_fingerprint(model: torch.nn.Module) -> str:
    """A short hash of a model's weights (names, shapes, dtypes and values): differs between checkpoints.

    Used as the model revision MTEB sees and in every on-disk cache key, so that two checkpoints of one
    base model never share cached embeddings, rows or results.
    """
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(str(tuple(tensor.shape)).encode())
        digest.update(str(tensor.dtype).encode())
        data = tensor.detach().cpu().contiguous()
        if data.dtype == torch.bfloat16:
            data = data.float()
        digest.update(data.numpy().tobytes())
    return digest.hexdigest()[:16]


def tokenizer_fingerprint(model: torch.nn.Module) -> str:
    """A short hash of the tokenizer of a SentenceTransformer ``model`` (its vocabulary and rules), or ``"none"``.

    A fast tokenizer is hashed through its full serialisation; a slow one through its sorted vocabulary and
    class name.
    """
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        return "none"
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        text = backend.to_str()
    else:
        text = type(tokenizer).__name__ + repr(sorted(tokenizer.get_vocab().items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
