"""Scoring one Dataset in memory: encode the keys once, run each family whose tables are present, decode.

:func:`score_in_memory` is what :func:`mas_eval.score` runs on an unsharded Dataset and what each
shard's worker runs (:mod:`mas_eval.scoring.shards`); :func:`score_by_shard` scores a sharded
Dataset in memory, one shard at a time.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from mas_eval.data.schema import RUN_ID_COLUMNS, RUN_KEY, TABLES
from mas_eval.errors import DataError
from mas_eval.metrics import registry
from mas_eval.metrics.codes import KeyCodes
from mas_eval.metrics.family import Family, Params, families
from mas_eval.scoring.request import Progress, Request, Step
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.scores_folder import in_run_order
from mas_eval.storage.stored_codes import ShardCodes

__all__ = [
    "encoded_tables",
    "joined_shards",
    "named_union",
    "run_attributes",
    "score_by_shard",
    "score_in_memory",
    "with_named_columns",
]

#: The key of the frame of carried run columns (registry.CARRIED) among the families' runs frames.
_CARRIED = "_carried"


def encoded_tables(ds: Dataset, names: list[str]) -> tuple[KeyCodes, dict[str, pl.LazyFrame]]:
    """Tables ``names`` keyed by integer codes (:mod:`mas_eval.metrics.codes`), encoded once.

    A shard of a Dataset written with stored codes (:mod:`mas_eval.storage.stored_codes`) reads them, when
    they still describe its files; other tables are encoded from their strings. An absent table is
    an empty one of the schema's columns: it flows through the families' transforms and leaves
    their metrics null, with no special case.
    """
    stored = ds.stored_codes
    coded = None if stored is None else stored.read(names)
    if stored is not None and coded is not None:
        codes, encoded = _from_stored_codes(ds, names, stored, coded)
        ds.check_run_ids(codes.runs[RUN_KEY], unique=True)
    else:
        tables = {name: ds[name] if name in ds else pl.LazyFrame(schema=TABLES[name].polars_schema) for name in names}
        codes = KeyCodes.of(tables, RUN_ID_COLUMNS)
        # Before encoding: the run code book must hold each run id once (and, for a shard, in it).
        ds.check_run_ids(codes.runs[RUN_KEY])
        encoded = {name: codes.encode(name, frame) for name, frame in tables.items()}
    return codes, encoded


def _from_stored_codes(
    ds: Dataset, names: list[str], stored: ShardCodes, coded: dict[str, pl.DataFrame]
) -> tuple[KeyCodes, dict[str, pl.LazyFrame]]:
    """Return :func:`encoded_tables` from a shard's stored codes: the same codes, without reading a key string.

    ``coded`` is what :meth:`ShardCodes.read` read.

    The shard's ``runs`` file is sorted by ``run_id`` and its ids are distinct (codes are stored
    only then), so its rows in file order are the run code book.
    """
    codes = KeyCodes(runs=ds["runs"].select(RUN_ID_COLUMNS).collect(), labels=stored.books())
    tables = {}
    for name in names:
        if name in coded:
            tables[name] = stored.coded(name, ds[name], coded[name])
        else:  # absent (empty), or keyed by case (ground truth): only its labels, if any, are coded
            frame = ds[name] if name in ds else pl.LazyFrame(schema=TABLES[name].polars_schema)
            tables[name] = codes.encode(name, frame)
    return codes, tables


def _run_table(
    codes: KeyCodes, frames: dict[str, pl.LazyFrame | pl.DataFrame], named: list[str] | None = None
) -> pl.DataFrame:
    """Return every family's run columns side by side on one row per run, decoded and led by the run's ids.

    Then :data:`~mas_eval.metrics.registry.CARRIED`, the registered columns and the ``named`` ones.

    Each family's ``runs`` frame has one row per run, in run order (:class:`~mas_eval.metrics.family.Family`):
    the frames are placed side by side in one query (cheaper than a join on the run key:
    docs/performance.md), and the run codes each one carried are checked afterwards, so that a frame breaking
    the contract is an error naming its family, never a silent misalignment.
    """
    expected = pl.int_range(codes.runs.height, dtype=pl.UInt32, eager=True).alias(RUN_KEY)
    carried = {name: f"_{RUN_KEY}_{name}" for name in frames}
    parts = [frame.lazy().rename({RUN_KEY: carried[name]}) for name, frame in frames.items()]
    side_by_side = pl.concat([expected.to_frame().lazy(), *parts], how="horizontal").with_columns(
        pl.col(RUN_KEY).set_sorted()
    )
    try:
        table = _decoded(codes, "runs", side_by_side, extra=[*(named or []), *carried.values()])
    except pl.exceptions.ShapeError:
        # Some frame has another height than runs. Error path only: count each one's rows to say which.
        broken = [
            name for name, frame in frames.items() if frame.lazy().select(pl.len()).collect().item() != len(expected)
        ]
    else:
        broken = [name for name, column in carried.items() if not table[column].equals(expected, check_names=False)]
    if broken:
        raise _NotOneRowPerRunError(broken)
    return table.drop(carried.values())


class _NotOneRowPerRunError(Exception):
    """A family's runs frame is not one row per run: repeated keys in the data, or a bug in the family."""

    def __init__(self, families: list[str]) -> None:
        super().__init__(families)
        self.families = families


def _decoded(
    codes: KeyCodes, table: str, frame: pl.LazyFrame, *, extra: list[str] | None = None, run_columns: bool = True
) -> pl.DataFrame:
    """Output table ``table`` with labels for codes, led by the run's identifying columns (and ``extra``).

    A family's frame may carry a run-identifying column of its own (the ``items`` of the answers
    family carry each answer's ``task``): where it is not null it takes precedence over the run's value.
    With ``run_columns=False`` a table is led by ``run_id`` and only those identifying columns it
    carries itself: a sharded Scores folder keeps the others once, in ``runs`` (:func:`scan_table`).
    """
    spec = registry.OUTPUT_TABLES[table]
    kinds = {column: kind for column, kind in spec.key if kind} | {
        m.name: m.codes for m in registry.METRICS if m.table == table and m.codes
    }
    schema = frame.collect_schema()
    columns = [name for name in registry.columns(table) if name in schema]
    if table == "runs":
        columns = [name for name in registry.CARRIED if name in schema] + columns
    lead = [
        pl.coalesce(pl.col(name).cast(pl.String), run_value).alias(name)
        if name != RUN_KEY and name in schema
        else run_value
        for name, run_value in zip(RUN_ID_COLUMNS, codes.run_columns(RUN_ID_COLUMNS), strict=True)
        if run_columns or name == RUN_KEY or name in schema
    ]
    return codes.decode(frame, kinds).select(*lead, *spec.key_columns, *columns, *(extra or [])).collect()


def _merged(table: str, frames: list[pl.LazyFrame | pl.DataFrame]) -> pl.LazyFrame:
    """Return one output table from the frames several families gave it, side by side on its key.

    ``agents``: decision and diagnosis columns of the same agents; a key only one family has leaves the others'
    columns null.
    """
    key = [RUN_KEY, *registry.OUTPUT_TABLES[table].key_columns]
    merged = frames[0].lazy()
    for frame in frames[1:]:
        merged = merged.join(frame.lazy(), on=key, how="full", coalesce=True)
    return merged.sort(key) if len(frames) > 1 else merged


def score_by_shard(ds: Dataset, request: Request) -> Scores:
    """Score a sharded Dataset in memory one shard at a time; its tables concatenated in run order.

    The tables of scoring it whole, bit for bit (a run's rows are all in one shard, and its sums
    add only its own rows), for the memory of one shard's inputs: scored whole, the shards'
    rows would first be gathered and sorted by run. With ``request.validate``, each shard is
    validated before it is scored (:meth:`Dataset.validate_shard`), and the rules across shards after.
    """
    parts = [
        score_in_memory(shard, request.preset, request.params, request.progress)
        for shard in ds.each_shard(validate=request.validate)
    ]
    return joined_shards(parts)


def joined_shards(parts: list[Scores], released: Callable[[str], object] | None = None) -> Scores:
    """Return the shards' Scores (in shard order) as one, each table's shards concatenated in run order.

    Every shard's ``runs`` is given every column named by the data in any of them.

    ``released(name)`` is called once table ``name`` of every part has been joined and let go.
    """
    first = parts[0]
    names = list(dict.fromkeys(name for part in parts for name in part.names))
    named = named_union([part.named for part in parts])
    if any(part.named != named for part in parts):
        # Shards found different names: each gets every one, null where its runs have none.
        columns = [c for family_columns in named.values() for c in family_columns]
        dtypes = {c: t for part in reversed(parts) for c, t in part.tables["runs"].schema.items() if c in columns}
        for part in parts:
            part.tables["runs"] = with_named_columns(part.tables["runs"], columns, dtypes)
    tables = {}
    for name in names:
        # Taken out of the parts as they are joined (without a copy), so that a table is held
        # twice at most.
        frames = [part.tables.pop(name) for part in parts if name in part.tables]
        tables[name] = in_run_order(pl.concat(frames, rechunk=False))
        del frames
        if released is not None:
            released(name)
    return Scores(
        tables=tables, preset=first.preset, params=first.params, ran=first.ran, skipped=first.skipped, named=named
    )


def _plan(ds: Dataset) -> tuple[list[Family], dict[str, str]]:
    """Return the families whose needed tables ``ds`` has, and why each other one is skipped."""
    ran, skipped = [], {}
    for family in families():
        missing = family.missing(ds.table_names)
        if missing:
            skipped[family.name] = f"the Dataset has no {' and no '.join(missing)} table"
        else:
            ran.append(family)
    return ran, skipped


def score_in_memory(
    ds: Dataset,
    preset: str,
    params: dict[str, Params],
    progress: Progress | None,
    *,
    run_columns: bool = True,
) -> Scores:
    """Score one Dataset in memory (a shard, or an unsharded Dataset) with each family's resolved ``params``.

    ``run_columns`` as for :func:`_decoded`, in every table but ``runs``.
    """

    def step(name: str) -> None:
        if progress is not None:
            progress(Step(name))

    ran, skipped = _plan(ds)
    read = list(dict.fromkeys(name for family in ran for name in family.tables()))
    with ds.reading():
        step("encoding keys")
        codes, tables = encoded_tables(ds, read)

        # The run columns carried as they are (registry.CARRIED, and the runs table's own columns beyond
        # the schema: a table's run attributes), in run order like a family's frame.
        attributes = run_attributes(tables["runs"])
        run_frames: dict[str, pl.LazyFrame | pl.DataFrame] = {
            _CARRIED: tables["runs"].select(RUN_KEY, *registry.CARRIED, *attributes).sort(RUN_KEY)
        }
        named: dict[str, list[str]] = {}
        own_tables: dict[str, list[pl.LazyFrame | pl.DataFrame]] = {}
        for family in ran:
            step(f"family {family.name}")
            for name, frame in family.compute(tables, params[family.name], codes).items():
                if name == "runs":
                    run_frames[family.name] = frame
                    if family.named:
                        named[family.name] = _named_in(family, frame)
                else:
                    own_tables.setdefault(name, []).append(frame)
        step("assembling tables")
        # Collected one after another: they share no work, and side by side (collect_all) they
        # contend for the cores (docs/performance.md).
        try:
            named_union([named])  # two families naming the same column is an error, not a silent overwrite
            by_data = [c for columns in named.values() for c in columns]
            _check_attributes(attributes, by_data)
            decoded = {"runs": _run_table(codes, run_frames, [*attributes, *by_data])}
        except _NotOneRowPerRunError as exc:
            # Error path only: a key repeated in a table the families read multiplies rows in their
            # joins (without validation); that is the user's to fix. Otherwise the family is wrong.
            ds.check_keys(read)
            msg = (
                f"metric family {' or '.join(map(repr, exc.families))} returned a runs frame that is not one row "
                "per run in run order; its compute must left-join its rows onto tables['runs'] and sort by run_id"
            )
            raise RuntimeError(msg) from None
        decoded |= {
            name: _decoded(codes, name, _merged(name, frames), run_columns=run_columns)
            for name, frames in own_tables.items()
        }
    return Scores(
        tables=decoded,
        preset=preset,
        params={name: value for p in params.values() for name, value in p.as_dict().items()},
        ran=[family.name for family in ran],
        skipped=skipped,
        named=named,
    )


def run_attributes(runs: pl.LazyFrame | pl.DataFrame) -> list[str]:
    """Return the columns of a Dataset's ``runs`` beyond the schema's (a table's run attributes).

    Such as ``num_rounds``: ``Scores.runs`` carries them as they are, after the run's epoch, so that
    ``compare(by=...)`` can group by them.

    >>> run_attributes(pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c"], "num_rounds": [3]}))
    ['num_rounds']
    """
    return [name for name in runs.lazy().collect_schema().names() if name not in TABLES["runs"].column_map]


def _check_attributes(attributes: list[str], named: list[str]) -> None:
    """Raise :class:`DataError` when a run attribute has the name of another column of ``Scores.runs``."""
    taken = set(registry.reserved("runs")) | set(named)
    clash = [name for name in attributes if name in taken or name.startswith("_")]
    if clash:
        msg = (
            f"table 'runs': column(s) {', '.join(map(repr, clash))} of the Dataset's own would be Scores.runs "
            "column(s) that another column already is (a registered metric, a score of outcomes, or a name starting "
            f"with '_', scoring's own); rename it in the Dataset, e.g. {clash[0].lstrip('_') + '_attribute'!r}"
        )
        raise DataError(msg)


def _named_in(family: Family, frame: pl.LazyFrame | pl.DataFrame) -> list[str]:
    """Return the columns of ``family``'s runs frame that it names from the data.

    Those it has not registered (:class:`~mas_eval.metrics.registry.NamedColumns`), checked against every other run
    column of the Scores.
    """
    registered = set(registry.columns("runs", family.name))
    names = [c for c in frame.lazy().collect_schema().names() if c != RUN_KEY and c not in registered]
    registry.check_named(names, " or ".join(entry.source for entry in family.named))
    return names


def named_union(parts: list[dict[str, list[str]]]) -> dict[str, list[str]]:
    """Return the columns named by the data over several shards' Scores: per family, every shard's names, sorted."""
    families_seen = list(dict.fromkeys(family for part in parts for family in part))
    union = {family: sorted({c for part in parts for c in part.get(family, [])}) for family in families_seen}
    taken = [c for columns in union.values() for c in columns]
    if len(taken) != len(set(taken)):
        twice = sorted({c for c in taken if taken.count(c) > 1})
        msg = f"two metric families name a run column {', '.join(map(repr, twice))}; rename it in one's table"
        raise DataError(msg)
    return union


def with_named_columns(runs: pl.DataFrame, columns: list[str], dtypes: dict[str, pl.DataType]) -> pl.DataFrame:
    """Return a shard's ``runs`` with every column named by the data in ``columns`` (null where it lacks one).

    ``dtypes`` gives each named column's type in the shards that have it; a shard whose column
    has another type (a score pass/fail in one shard and not in another) is a :class:`DataError`.
    """
    for name in columns:
        if name in runs.columns and runs.schema[name] != dtypes[name]:
            msg = (
                f"run column {name!r} is {runs.schema[name]} in one shard and {dtypes[name]} in another: a score "
                "pass/fail in some runs and not in others; record outcomes.passed for every run of it or for none"
            )
            raise DataError(msg)
    fixed = [c for c in runs.columns if c not in set(columns)]
    return runs.select(
        *fixed, *(pl.col(c) if c in runs.columns else pl.lit(None, dtype=dtypes[c]).alias(c) for c in columns)
    )
