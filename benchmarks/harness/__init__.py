"""Machinery shared by the benchmark studies: provenance stamps and the quiet-machine check
(:mod:`benchmarks.harness.provenance`), and the training runner of the recipe studies
(:mod:`benchmarks.harness.runner`).

A study script is run as a file (``python benchmarks/<study>/<script>.py``), so it puts the repository root on
``sys.path`` before importing from here. The library (``st_debias``) never imports this package.
"""
