"""Do the scores equal those of an earlier commit? Every table, every column: bit for bit, and to 1e-12.

Usage::

    python benchmarks/same_outputs.py --base 9abde18          # the bundled sample and 100,000 runs
    python benchmarks/same_outputs.py --base HEAD~3 --runs 20000

The base commit's ``mas_eval`` is taken with ``git archive`` into a temporary folder; both it and
this checkout score the same Dataset folders in fresh processes, with ``pairwise=True``: the bundled
sample (decision, diagnosis and answer runs) under every preset, and ``--runs`` simulated decision
runs under the decision presets. Every table the Scores hold is compared. A table is
``identical`` when every column is equal bit for bit (floats compared as their bits, nulls in the
same places); the check passes when floats at least agree to
``|a - b| <= 1e-12 * max(1, |b|)`` with nulls in the same places; every other column exactly.
Two versions that add a sum's terms in different orders differ by about 1e-15 (the numpy
reductions against the Polars group-bys they replaced: 7.1e-15 at most), so the check has
two to three orders of magnitude of slack and no more. Results go to
``reports/benchmarks/same_outputs.json``; the exit code is 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "reports" / "benchmarks" / "same_outputs.json"
TOLERANCE = 1e-12
#: Presets per dataset: every preset on the sample (all three families); the decision ones on the simulated runs.
PRESETS = {"sample": ("spec", "crisis-mas-poc", "lddx-v6", "medaisure"), "simulated": ("spec", "crisis-mas-poc")}

# Runs in a fresh process with the package of one side first on sys.path.
_SCORE = """
import sys
import mas_eval
ds = mas_eval.Dataset.open(sys.argv[1])
mas_eval.score(ds, preset=sys.argv[2], pairwise=True).write(sys.argv[3])
print(mas_eval.__file__)
"""


def _score(package_root: Path, dataset: Path, preset: str, out: Path, workdir: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _SCORE, str(dataset), preset, str(out)],
        capture_output=True,
        text=True,
        check=True,
        cwd=workdir,
        env={"PYTHONPATH": str(package_root), "PATH": ""},
    )
    return done.stdout.strip()


def _compare(base: Path, head: Path) -> dict:
    """Per table: rows, columns compared, the largest float difference and what differs."""
    report = {}
    names = json.loads((head / "_scores.json").read_text())["tables"]
    base_names = json.loads((base / "_scores.json").read_text())["tables"]
    if names != base_names:
        report["(tables)"] = {"problems": [f"tables differ: {names} vs {base_names}"], "identical": False}
    for table in names:
        if table not in base_names:
            continue
        a, b = pl.read_parquet(head / f"{table}.parquet"), pl.read_parquet(base / f"{table}.parquet")
        problems, largest = [], 0.0
        identical = a.schema == b.schema and a.height == b.height
        if a.columns != b.columns or a.height != b.height:
            problems.append(f"shape or columns differ: {a.shape} {a.columns} vs {b.shape} {b.columns}")
        else:
            for column in a.columns:
                x, y = a[column], b[column]
                if x.dtype != y.dtype:
                    problems.append(f"{column}: dtype {x.dtype} vs {y.dtype}")
                elif x.dtype.is_float():
                    xs, ys = x.to_numpy(), y.to_numpy()
                    bits = np.dtype(f"u{xs.dtype.itemsize}")
                    identical &= x.is_null().equals(y.is_null()) and np.array_equal(xs.view(bits), ys.view(bits))
                    if not np.array_equal(np.isnan(xs), np.isnan(ys)):
                        problems.append(f"{column}: nulls differ")
                        continue
                    diff = np.abs(xs - ys)
                    diff = diff[~np.isnan(diff)]
                    worst = float(diff.max()) if diff.size else 0.0
                    largest = max(largest, worst)
                    bound = TOLERANCE * np.maximum(1.0, np.abs(ys[~np.isnan(ys)]))
                    if diff.size and np.any(diff > bound):
                        problems.append(f"{column}: differs by up to {worst:.3g}")
                elif not x.equals(y, check_names=True):
                    problems.append(f"{column}: values differ")
        identical &= not problems
        report[table] = {
            "rows": a.height,
            "columns": a.width,
            "max_abs_float_difference": largest,
            "identical": bool(identical),
            "problems": problems,
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the commit to compare with (e.g. 9abde18)")
    parser.add_argument("--runs", type=int, default=100_000, help="simulated runs (seed 1)")
    args = parser.parse_args()
    base_commit = subprocess.run(
        ["git", "rev-parse", args.base], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()
    head_commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()
    sys.path.insert(0, str(ROOT))
    import mas_eval

    results = []
    with tempfile.TemporaryDirectory(prefix="mas_eval_same_") as tmp:
        work = Path(tmp)
        base_root = work / "base"
        base_root.mkdir()
        archive = subprocess.run(["git", "archive", base_commit, "mas_eval"], capture_output=True, check=True, cwd=ROOT)
        subprocess.run(["tar", "-x", "-C", str(base_root)], input=archive.stdout, check=True)
        simulated = mas_eval.simulate(args.runs, seed=1).write(work / "simulated", validate=False)
        for name, dataset in (("sample", ROOT / "data" / "sample"), (f"simulated {args.runs:,}", simulated)):
            for preset in PRESETS[name.split()[0]]:
                tag = f"{name.split()[0]}-{preset}"
                where = {
                    side: _score(root, dataset, preset, work / f"{side}-{tag}", work)
                    for side, root in (("base", base_root), ("head", ROOT))
                }
                if not where["base"].startswith(str(base_root)) or not where["head"].startswith(str(ROOT)):
                    msg = f"imported the wrong package: {where}"
                    raise SystemExit(msg)
                report = _compare(work / f"base-{tag}", work / f"head-{tag}")
                ok = not any(entry["problems"] for entry in report.values())
                bitwise = all(entry["identical"] for entry in report.values())
                worst = max(entry.get("max_abs_float_difference", 0.0) for entry in report.values())
                verdict = ("identical" if bitwise else "same within tolerance") if ok else "DIFFERENT"
                print(
                    f"{name:>18} {preset:>15}: {verdict}, {len(report)} tables (largest float difference {worst:.2g})"
                )
                results.append({"dataset": name, "preset": preset, "same": ok, "identical": bitwise, "tables": report})
    summary = {
        "check": f"every table of the working tree's scores (HEAD {head_commit[:10]}) vs commit {base_commit[:10]}",
        "tolerance": f"|a - b| <= {TOLERANCE:g} * max(1, |b|); nulls in the same places; other columns exact",
        "results": results,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {OUT}")
    if not all(r["same"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
