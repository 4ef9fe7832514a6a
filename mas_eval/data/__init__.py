"""The Dataset contract: its tables and columns, domain vocabulary, failure-mode taxonomies, and validation rules.

Nothing here reads or writes the user's files; :mod:`mas_eval.storage` does. (The taxonomies' CSVs
are package resources, read by :mod:`~mas_eval.data.taxonomies`.)
"""
