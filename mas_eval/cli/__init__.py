"""The ``mas-eval`` command line: one module per command group.

Each command is a thin shell over a Python function: it parses, calls the public function, prints.

* :mod:`~mas_eval.cli.app` — the typer app, its commands in order, and :func:`main` (errors as one line, exit 2)
* :mod:`~mas_eval.cli.common` — the help's look, shared arguments, where an option's default comes from
* :mod:`~mas_eval.cli.simulate` — ``simulate``
* :mod:`~mas_eval.cli.ingest` — ``ingest`` (canonical JSONL records, Local-DDx results)
* :mod:`~mas_eval.cli.benchmark` — ``benchmark-report``, ``combined-score`` (a MedAISure benchmark report)
* :mod:`~mas_eval.cli.score` — ``score``, ``reproduce``
* :mod:`~mas_eval.cli.compare` — ``compare``, ``report``
* :mod:`~mas_eval.cli.dataset` — ``validate``, ``reshard``, ``summary``
* :mod:`~mas_eval.cli.demo` — ``demo`` and :func:`~mas_eval.cli.demo.run_demo`
* :mod:`~mas_eval.cli.terminal` — consoles, progress, tables that fit the terminal

Heavy modules (the statistics layer, the plots) are imported by the commands that use them,
so that ``mas-eval --help`` answers at once.
"""

from mas_eval.cli.app import app, main

__all__ = ["app", "main"]
