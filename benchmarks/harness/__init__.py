"""Machinery shared by the benchmark studies: provenance stamps and the quiet-machine check
(:mod:`benchmarks.harness.provenance`), and the training runner of the recipe studies
(:mod:`benchmarks.harness.runner`).

The lab is installed as the package ``benchmarks`` (``pip install -e benchmarks``), so a study script run as a
file (``python benchmarks/<study>/<script>.py``) imports from here as is. The library (``st_debias``) never
imports this package.
"""
