"""MarginNegationLoss reads exactly three text columns; the anchor's dropout view is its own."""

from __future__ import annotations

import pytest

from st_debias.losses import CachedMarginNegationLoss, MarginNegationLoss


@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
@pytest.mark.parametrize("contrastive", ["dropout", "paraphrase"])
def test_a_fourth_text_column_is_refused(cached: bool, contrastive: str, tiny_model, wiki_sentences) -> None:
    """A fourth text column (an id, a second paraphrase) was silently taken as the anchor's dropout view."""
    loss = (
        CachedMarginNegationLoss(tiny_model, 2, contrastive=contrastive)
        if cached
        else MarginNegationLoss(tiny_model, contrastive=contrastive)
    )
    columns = [tiny_model.preprocess(wiki_sentences[i * 4 : (i + 1) * 4]) for i in range(4)]
    with pytest.raises(ValueError, match="expects 3 text columns .* got 4"):
        loss(columns, None)
    assert loss(columns[:3], None).isfinite()
