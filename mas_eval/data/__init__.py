"""The Dataset contract: its tables and columns, domain vocabulary, and validation rules.

Nothing here reads or writes files; :mod:`mas_eval.storage` does.
"""
