"""The st_debias lab: one study per folder (``benchmarks.<study>``) beside the shared harness
(:mod:`benchmarks.harness`), installed with ``pip install -e benchmarks``; the library never imports it."""
