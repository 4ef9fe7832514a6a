"""Hostile inputs, grouped by the surface they attack (one module each): every case asserts the
promise it tests with :mod:`tests.promises` (exit 2, one line naming the true cause, nothing
written, inputs byte for byte the same), or, for a value set aside, the rest ingested and the
set-aside value reported."""
