"""Build-report accounting."""

from __future__ import annotations

from collections import Counter

import pytest

from st_debias.data.io.report import AccountingError, BuildReport


def test_check_accounting_raises_accounting_error_not_assertion() -> None:
    """Failure mode: an input that is neither an anchor nor a counted skip. It used to raise
    AssertionError, which ``python -O`` and ``except AssertionError`` test helpers treat as a bug check."""
    report = BuildReport(builder="ipw", inputs=3, anchors=1, skipped=Counter(empty=1))
    with pytest.raises(AccountingError, match="ipw: 3 inputs but 1 anchors \\+ 1 skipped"):
        report.check_accounting()
    assert not issubclass(AccountingError, AssertionError)


def test_check_accounting_passes_when_counts_add_up() -> None:
    BuildReport(builder="ipw", inputs=3, anchors=2, skipped=Counter(empty=1)).check_accounting()
