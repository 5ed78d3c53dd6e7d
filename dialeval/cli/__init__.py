"""The ``dialeval`` command line, the top layer: each job reads the metric registry and the root
modules.

``main.py`` builds the parsers (from the jobs' option dataclasses) and dispatches; the jobs are
``evaluate_job.py``, ``meta_eval_job.py`` and ``dtg_job.py``; ``plots.py`` draws their figures.
"""

from dialeval.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
