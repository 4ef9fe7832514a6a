"""``python -m mas_eval.cli``: the same command line as ``mas-eval``."""

from mas_eval.cli import main

main()
