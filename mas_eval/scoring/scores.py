"""``Scores``: the named output tables of :func:`mas_eval.score`, in memory or read from a Scores folder."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import (
    MAPPING,
    NONE,
    PATH,
    TEXT,
    Boolean,
    Options,
    Predicate,
    validate_fields,
    validate_params,
)
from mas_eval.errors import SchemaError
from mas_eval.formatting import summary_html, summary_text
from mas_eval.storage.inputs import reading
from mas_eval.storage.manifests import write_manifest
from mas_eval.storage.outputs import COMPRESSIONS, atomic_directory
from mas_eval.storage.scores_folder import (
    MANIFEST,
    read_folder,
    read_layout,
    scan_table,
    scores_folder,
    table_files,
)

__all__ = ["Scores", "write_scores"]

#: What :meth:`Scores.open` takes as ``tables``: a list of names (a lone string would be read letter by letter).
_TABLE_NAMES = Predicate(
    lambda value: (
        not isinstance(value, str | bytes)
        and isinstance(value, Sequence)
        and all(isinstance(name, str) for name in value)
    ),
    "a list of table names",
)


@validate_fields(
    {
        "tables": [MAPPING],
        "preset": [TEXT],
        "params": [MAPPING],
        "ran": [_TABLE_NAMES],
        "skipped": [MAPPING],
        "named": [MAPPING],
        "source": [PATH, NONE],
    }
)
@dataclass
class Scores(Mapping[str, pl.DataFrame]):
    """The named output tables of :func:`score`: ``scores["runs"]`` and ``scores.runs`` alike.

    Attributes
    ----------
    tables
        Output table name → frame: ``runs`` (one row per run, every family's run columns) and
        each family's own tables (``agents``, ``alternatives``, ``pairwise``, ``items``, ...). Every row
        is led by the run's identifying columns (``run_id, system, case_id, task, variant``),
        then its key, and the rows are sorted by that key.
    preset
        The preset the parameters started from.
    params
        The resolved parameters of every family, by name.
    ran
        The families that ran.
    skipped
        The families that did not, each with the reason (the tables it lacked).
    named
        The run columns each family named from the data, by family
        (:class:`~mas_eval.metrics.registry.NamedColumns`): the outcomes family's one column per
        score name (``{"outcomes": ["f1", "match"]}``), after every registered column of ``runs``.
    source
        The folder :meth:`open` read them from (``None`` for scores computed in memory): a
        report hashes its files into its provenance.

    Examples
    --------
    >>> import mas_eval
    >>> scores = mas_eval.score(mas_eval.simulate(20, seed=1))
    >>> scores.names, scores.ran, scores.source
    (['runs', 'agents', 'alternatives', 'conflicts'], ['decision'], None)
    >>> scores["runs"].height, scores.runs.height, len(scores)
    (20, 20, 4)
    """

    tables: dict[str, pl.DataFrame]
    preset: str = "spec"
    params: dict[str, Any] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    named: dict[str, list[str]] = field(default_factory=dict)
    source: Path | None = field(default=None, compare=False)

    def __getitem__(self, name: str) -> pl.DataFrame:
        """Return table ``name``; a :class:`KeyError` names the tables there are."""
        try:
            return self.tables[name]
        except KeyError:
            msg = f"these Scores have no table {name!r}; they have: {', '.join(self.tables)}"
            raise KeyError(msg) from None

    def __getattr__(self, name: str) -> pl.DataFrame:
        """Return table ``name`` read as an attribute (``scores.runs``)."""
        # Only reached when normal lookup fails: table names read as attributes.
        tables = self.__dict__.get("tables")
        if tables is not None and name in tables:
            return tables[name]
        msg = f"{type(self).__name__!r} object has no attribute or table {name!r}"
        raise AttributeError(msg)

    def __iter__(self) -> Iterator[str]:
        """Iterate over the table names, ``runs`` first."""
        return iter(self.tables)

    def _summary(self) -> tuple[list[tuple[str, str]], list[tuple[str, int | None, int]]]:
        facts = [("preset", self.preset), ("ran", ", ".join(self.ran) or "none")]
        # One line per skipped family, so that each reason is read whole.
        facts += [("skipped" if i == 0 else "", f"{name}: {why}") for i, (name, why) in enumerate(self.skipped.items())]
        if self.named:
            facts.append(("named", "; ".join(f"{name}: {', '.join(cols)}" for name, cols in self.named.items())))
        if self.source is not None:
            facts.append(("source", str(self.source)))
        return facts, [(name, frame.height, frame.width) for name, frame in self.tables.items()]

    def __repr__(self) -> str:
        """Return a compact summary: preset, families ran and skipped (with the reason), source, each table's shape.

        >>> import mas_eval
        >>> print(repr(mas_eval.score(mas_eval.simulate(50, seed=1))))
        <Scores: 4 tables>
          preset        spec
          ran           decision
          skipped       diagnosis: the Dataset has no 'ddx' table
                        answers: the Dataset has no 'answers' table
                        outcomes: the Dataset has no 'outcomes' table
                        process: the Dataset has no 'messages' or 'usage' or 'tool_calls' table
          runs          50 rows x 39 columns
          agents        147 rows x 10 columns
          alternatives  242 rows x 16 columns
          conflicts     104 rows x 16 columns
        """
        return summary_text("Scores", *self._summary())

    def _repr_html_(self) -> str:
        """Return the summary of :meth:`__repr__` as HTML tables, for Jupyter; every name escaped."""
        return summary_html("Scores", *self._summary())

    def __len__(self) -> int:
        """Return the number of tables."""
        return len(self.tables)

    @property
    def items(self) -> Any:  # type: ignore[override]
        """The ``items`` table (answers family: one row per answer) when there is one; callable either way.

        ``scores.items`` is a table name and, as for every :class:`~collections.abc.Mapping`, a
        method: with an ``items`` table it is that table (so ``compare(scores.items, ...)``
        works), and calling it, ``scores.items()``, still gives the (name, table) pairs.
        """
        frame = self.__dict__.get("tables", {}).get("items")
        if frame is None:
            return Mapping.items.__get__(self, type(self))
        table = _ItemsTable._from_pydf(frame._df)
        table._scores = self
        return table

    @property
    def names(self) -> list[str]:
        """The table names, ``runs`` first."""
        return list(self.tables)

    @validate_params({"path": [PATH], "overwrite": [Boolean()], "compression": [Options(COMPRESSIONS)]})
    def write(self, path: str | Path, *, overwrite: bool = False, compression: str = "zstd") -> Path:
        """Write each table to ``<path>/<name>.parquet`` atomically, with a manifest; return the folder.

        The manifest holds the version, preset, parameters, the families that ran and were
        skipped, the tables, and the run columns named by the data. ``compression`` is the
        files' Parquet compression (:data:`~mas_eval.storage.outputs.COMPRESSIONS`).

        Examples
        --------
        >>> import tempfile, mas_eval
        >>> from pathlib import Path
        >>> scores = mas_eval.score(mas_eval.simulate(20, seed=1))
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     folder = scores.write(Path(tmp) / "scores", compression="lz4")
        ...     sorted(file.name for file in folder.iterdir())
        ['_scores.json', 'agents.parquet', 'alternatives.parquet', 'conflicts.parquet', 'runs.parquet']
        """
        return write_scores(self, path, overwrite=overwrite, compression=compression)

    @classmethod
    @validate_params({"path": [PATH], "tables": [_TABLE_NAMES, NONE]})
    def open(cls, path: str | Path, *, tables: Sequence[str] | None = None) -> Scores:
        """Read what :meth:`write` wrote: the tables its manifest lists (every ``*.parquet`` without one).

        Parameters
        ----------
        path
            The Scores folder.
        tables
            Read only these of its tables (by default all): at a million decision runs the
            ``alternatives`` and ``agents`` tables hold 7.5 million rows that a look at the
            run columns does not need. A name the folder lacks is left out; the rest of the
            Scores (preset, parameters, families) is read as usual.

        Raises
        ------
        SchemaError
            ``path`` is not a Scores folder; its manifest is unreadable, not one this version
            writes, or disagrees with the folder (a table or shard more or fewer, other row
            counts); the message names the file and the fix.
        UnreadableFileError
            A table's file is truncated or corrupt.

        Examples
        --------
        >>> import tempfile, mas_eval
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     folder = mas_eval.score(mas_eval.simulate(20, seed=1)).write(Path(tmp) / "scores")
        ...     every, runs = Scores.open(folder), Scores.open(folder, tables=["runs"])
        >>> every.names, runs.names, runs.ran, every.source.name
        (['runs', 'agents', 'alternatives', 'conflicts'], ['runs'], ['decision'], 'scores')
        """
        root, manifest, read = read_folder(path, tables)
        families = manifest.get("families", {})
        return cls(
            tables=read,
            preset=manifest.get("preset", "spec"),
            params=manifest.get("params") or {},
            ran=families.get("ran", []),
            skipped=families.get("skipped", {}),
            named=manifest.get("named") or {},
            source=root,
        )

    @staticmethod
    @validate_params({"path": [PATH]})
    def manifest(path: str | Path) -> dict[str, Any]:
        """Return the manifest of a Scores folder (``_scores.json``).

        Preset, parameters, families, tables, and for a sharded folder (:mod:`mas_eval.scoring.shards`) ``shards``
        and ``rows`` per table.

        Examples
        --------
        >>> import tempfile, mas_eval
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     manifest = Scores.manifest(mas_eval.score(mas_eval.simulate(20, seed=1)).write(Path(tmp) / "s"))
        >>> sorted(manifest), manifest["families"]["ran"]
        (['families', 'mas_eval_version', 'params', 'preset', 'tables'], ['decision'])
        """
        return read_layout(scores_folder(path))[0]

    @staticmethod
    @validate_params({"path": [PATH], "name": [TEXT]})
    def table_files(path: str | Path, name: str = "runs") -> list[Path]:
        """Return the Parquet files of table ``name`` of a Scores folder: one, or one per shard.

        Examples
        --------
        >>> import tempfile, mas_eval
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     folder = mas_eval.simulate(20, seed=1).write(Path(tmp) / "ds", shards=2)
        ...     out = mas_eval.score(mas_eval.Dataset.open(folder), out=Path(tmp) / "scores").source
        ...     [file.relative_to(out).as_posix() for file in Scores.table_files(out, "runs")]
        ['runs/shard=0/part-0.parquet', 'runs/shard=1/part-0.parquet']
        """
        root = scores_folder(path)
        return table_files(root, [name], read_layout(root)[2])

    @staticmethod
    @validate_params({"path": [PATH], "name": [TEXT]})
    def scan(path: str | Path, name: str = "runs") -> pl.LazyFrame:
        """Return one table of a Scores folder, lazily: a query reads only the columns it uses.

        What ``mas-eval compare`` reads, so that comparing two metrics of a million runs does
        not load every table and column. The schema is read here (a truncated file is named at
        once); a corrupt page surfaces when the query runs, named if it runs inside
        :func:`mas_eval.storage.inputs.reading` (:class:`~mas_eval.errors.UnreadableFileError`).

        Examples
        --------
        >>> import tempfile, mas_eval, polars as pl
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     folder = mas_eval.score(mas_eval.simulate(20, seed=1)).write(Path(tmp) / "scores")
        ...     per_system = Scores.scan(folder).group_by("system").agg(pl.len()).sort("system").collect()
        >>> per_system.rows()
        [('mas', 10), ('single', 10)]
        """
        root = scores_folder(path)
        _, have, shards = read_layout(root)
        if name not in have or (shards is None and not (root / f"{name}.parquet").is_file()):
            msg = f"{root}: these Scores have no {name!r} table; they have: {', '.join(have)}"
            raise SchemaError(msg)
        files = table_files(root, [name], shards)
        with reading(files):
            frame = scan_table(root, name, shards)
            frame.collect_schema()
        return frame


def write_scores(scores: Scores, path: str | Path, *, overwrite: bool, compression: str) -> Path:
    """Write ``scores`` as :meth:`Scores.write` does, its arguments checked already; return the folder."""
    target = Path(path)
    with atomic_directory(target, overwrite=overwrite) as staging:
        for name, frame in scores.tables.items():
            frame.write_parquet(staging / f"{name}.parquet", compression=compression)  # type: ignore[arg-type]
        manifest = {
            "preset": scores.preset,
            "params": scores.params,
            "families": {"ran": scores.ran, "skipped": scores.skipped},
            "tables": scores.names,
            **({"named": scores.named} if scores.named else {}),
        }
        write_manifest(staging, MANIFEST, manifest)
    return target


class _ItemsTable(pl.DataFrame):
    """The ``items`` table as ``Scores.items`` gives it: a DataFrame that, called, is ``Mapping.items``."""

    _scores: Scores | None = None

    def __call__(self) -> ItemsView[str, pl.DataFrame]:
        if self._scores is None:  # a frame derived from it (``scores.items.head()``) is a plain table
            msg = "this is a frame of the items table, not Scores.items; call .items() on the Scores"
            raise TypeError(msg)
        return ItemsView(self._scores)
