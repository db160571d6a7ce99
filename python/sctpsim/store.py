"""The results store of a sweep: one record per run, written as each run finishes.

Layout of a store directory ``DIR``::

    runs/<run_id>.json      one record per finished run (ok or failed), written atomically
    runs.parquet            every run of the sweep, one row each, in run order
    summary.csv             n, mean, stdev and 95% confidence interval per combination
    sweep.toml              a copy of the sweep file (for the record)
    plots/                  what ``sctpsim plot`` draws

Each finished run is written to a temporary file and renamed into ``runs/``: a run
file exists completely or not at all, whatever happens to the process. Resuming
reads ``runs/``: a run whose ``run_id`` (the hash of its resolved inputs) has a file
with status ``ok`` is skipped; failed and missing runs are run again. Files of runs
that are not in the current sweep (because the sweep or the scenario changed) are
left alone and never read into the results.

A run's record is JSON (its inputs, status, error, and every scalar with its unit;
floats written as the shortest text that reads back to the same bits): a run of
a WLAN study has over a thousand scalars, which took about 200 ms to write as a
one-row Parquet file and 150 ms to read back, against a few milliseconds as JSON.
Stores written by earlier versions, one ``runs/<run_id>.parquet`` row per run, are
still read, so an interrupted sweep resumes across the upgrade.

``runs.parquet`` is rebuilt from ``runs/`` and the sweep's run list, sorted by run
order, so it has the same bytes however the runs were executed (one process,
several, or a Dask cluster).

Columns of ``runs.parquet``:

* ``run`` (run order), ``run_id``;
* one column per parameter, named by its key path (``links[1].delay``), holding
  the value as written in the sweep file (tables as TOML text);
* ``replication``, ``seed``, ``status`` (``ok`` / ``failed``), ``error``;
* one float column per scalar, named ``kind/entity/metric``
  (``flow/path1/goodput``); its unit is in the Parquet field metadata (``unit``),
  and :func:`load_runs` puts all of them in ``df.attrs["units"]``. Scalars a run
  did not produce (failed runs, or counters such as ``drops_link_down`` that only
  exist when something happened) are null.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from sctpsim import _toml
from sctpsim.sweep import RESERVED_COLUMNS, RunSpec

__all__ = [
    "RUNS_DIR",
    "RUNS_FILE",
    "SUMMARY_FILE",
    "RunRecord",
    "RunsTable",
    "Store",
    "StoreError",
    "forget_tables",
    "load_runs",
]

RUNS_DIR = "runs"
RUNS_FILE = "runs.parquet"
SUMMARY_FILE = "summary.csv"
SWEEP_COPY = "sweep.toml"
LOCK_FILE = ".lock"
_META_KEY = b"sctpsim"
_RUN_FILE = re.compile(r"([0-9a-f]{20})\.(?:json|parquet)")


class StoreError(Exception):
    """The directory cannot be used as a results store (or read as one)."""


@dataclass
class RunRecord:
    """The outcome of one run as stored: status, error and scalars (name -> value, unit)."""

    run_id: str
    status: str
    error: str | None = None
    scalars: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "error": self.error,
            "scalars": dict(self.scalars),
            "units": dict(self.units),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunRecord:
        return cls(
            run_id=str(d["run_id"]),
            status=str(d["status"]),
            error=None if d.get("error") is None else str(d["error"]),
            scalars={str(k): float(v) for k, v in dict(d.get("scalars") or {}).items()},
            units={str(k): str(v) for k, v in dict(d.get("units") or {}).items()},
        )


# -------------------------------------------------------------- parameter columns


def _parameter_column(values: Sequence[Any]) -> pa.Array:
    """One typed column for a parameter's values.

    Booleans, integers and strings keep their type; integers mixed with floats
    become floats; anything else (tables, lists, mixed types) becomes text:
    strings as they are, other values as TOML literals.
    """
    kinds = {type(v) for v in values}
    if kinds == {bool}:
        return pa.array(values, type=pa.bool_())
    if kinds == {int}:
        return pa.array(values, type=pa.int64())
    if kinds and kinds <= {int, float}:
        return pa.array([float(v) for v in values], type=pa.float64())
    return pa.array(
        [v if isinstance(v, str) else _toml.literal(v) for v in values], type=pa.string()
    )


def _scalar_field(name: str, unit: str) -> pa.Field:
    return pa.field(name, pa.float64(), nullable=True, metadata={"unit": unit})


# ------------------------------------------------------------------------ store


def forget_tables(directory: Path) -> None:
    """Remove a store's ``runs.parquet`` and ``summary.csv`` (nothing if ``directory`` is
    not a store). They are rebuilt when its sweep completes; removing them when a sweep
    starts means a store whose sweep was interrupted never shows a stale, complete-looking
    table. The stored runs stay.
    """
    if not (directory / RUNS_DIR).is_dir():
        return
    for name in (RUNS_FILE, SUMMARY_FILE):
        with contextlib.suppress(FileNotFoundError):
            (directory / name).unlink()


class Store:
    """A results directory, opened for one sweep (see the module docs).

    Use as a context manager: it holds an exclusive lock on ``DIR/.lock`` so that
    two sweeps cannot write the same store at once.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.runs_dir = self.directory / RUNS_DIR
        self._lock: Any = None

    # ------------------------------------------------------------- opening

    def __enter__(self) -> Store:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Create (or reopen) the store, lock it and clear leftovers of killed writers.

        Raises:
            StoreError: the directory holds other files, or another sweep is using it.
        """
        d = self.directory
        if d.exists() and not d.is_dir():
            raise StoreError(f"{d} exists and is not a directory")
        if d.is_dir() and any(d.iterdir()) and not self.runs_dir.is_dir():
            raise StoreError(
                f"{d} exists and does not look like an sctpsim sweep directory; refusing to use it"
            )
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self._acquire_lock()
        for leftover in [*self.runs_dir.glob(".*.tmp"), *d.glob(".*.tmp")]:
            with contextlib.suppress(OSError):
                leftover.unlink()
        forget_tables(d)

    def _acquire_lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no locking
            return
        f = (self.directory / LOCK_FILE).open("a+")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise StoreError(f"{self.directory} is in use by another sweep") from None
        self._lock = f

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()  # releases the lock
            self._lock = None

    # -------------------------------------------------------------- runs

    def run_path(self, run_id: str) -> Path:
        return self.runs_dir / f"{run_id}.json"

    def stored_ids(self) -> set[str]:
        """Run ids with a file in ``runs/``."""
        return {m.group(1) for p in self.runs_dir.iterdir() if (m := _RUN_FILE.fullmatch(p.name))}

    def read(self, run_id: str) -> RunRecord | None:
        """The stored record of a run, or ``None`` if there is none (or it is unreadable)."""
        try:
            doc = json.loads(self.run_path(run_id).read_bytes())
        except FileNotFoundError:
            return self._read_parquet(run_id)
        except (OSError, ValueError):
            return None  # damaged: treat as not run; it will be run and replaced
        if not isinstance(doc, dict) or doc.get("run_id") != run_id or "status" not in doc:
            return None
        try:
            return RunRecord.from_dict(doc)
        except (TypeError, ValueError, AttributeError):
            return None

    def _read_parquet(self, run_id: str) -> RunRecord | None:
        """A run's record as earlier versions stored it: a one-row Parquet file."""
        try:
            table = pq.read_table(self.runs_dir / f"{run_id}.parquet")
        except FileNotFoundError:
            return None
        except (OSError, pa.ArrowException):
            return None
        if table.num_rows != 1 or "status" not in table.column_names:
            return None
        row = table.to_pylist()[0]
        if row.get("run_id") != run_id:
            return None
        scalars: dict[str, float] = {}
        units: dict[str, str] = {}
        for f in table.schema:
            if "/" in f.name and row[f.name] is not None:
                scalars[f.name] = float(row[f.name])
                units[f.name] = (f.metadata or {}).get(b"unit", b"").decode("utf-8")
        return RunRecord(run_id, str(row["status"]), row.get("error"), scalars, units)

    def write(self, spec: RunSpec, record: RunRecord) -> Path:
        """Write one run's record atomically (temporary file, then rename)."""
        doc = {
            **record.to_dict(),
            "run_id": spec.run_id,
            "parameters": dict(spec.parameters),
            "replication": spec.replication,
            "seed": spec.seed,
        }
        # A parameter JSON has no type for (a TOML date) is kept as its TOML literal.
        text = json.dumps(doc, default=_toml.literal)
        dest = self.run_path(spec.run_id)
        write_atomically(dest, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        return dest

    # ------------------------------------------------------ consolidation

    def consolidate(
        self,
        specs: Sequence[RunSpec],
        parameters: Sequence[str],
        name: str,
        filled: RunsTable | None = None,
    ) -> pa.Table:
        """Build ``runs.parquet`` from the stored runs of ``specs`` (in their order).

        ``filled`` holds the runs already gathered (as written or read); the others are
        read from ``runs/``. Runs without a record are left out. The file is written
        atomically and has the same bytes whatever order the runs finished in.
        """
        table = filled if filled is not None else RunsTable(specs)
        for run_id in table.missing():
            record = self.read(run_id)
            if record is not None:
                table.add(record)
        arrow = table.to_arrow(parameters, name)
        write_atomically(
            self.directory / RUNS_FILE, lambda p: pq.write_table(arrow, p, compression="zstd")
        )
        return arrow


class RunsTable:
    """The consolidated table of a sweep's runs, filled one record at a time, in any order.

    The records themselves are not kept: each run's scalars go straight into one array per
    scalar (a wlan-handover sweep has 900 runs of about 3,300 scalars each, which as
    Python dictionaries took more than 500 MB; as arrays, 24 MB). The table is the same
    whatever order the records come in (see the module docs for its columns): rows in run
    order, scalar columns in order of first appearance in that order (the engine's own
    order), each with the unit its first appearance gives.
    """

    def __init__(self, specs: Sequence[RunSpec]) -> None:
        self._specs = list(specs)
        self._rows: dict[str, list[int]] = {}
        for i, spec in enumerate(self._specs):
            self._rows.setdefault(spec.run_id, []).append(i)
        n = len(self._specs)
        self._status: list[str | None] = [None] * n
        self._error: list[str | None] = [None] * n
        # Per scalar, its value in each row and whether the row has it.
        self._columns: dict[str, tuple[array[float], bytearray]] = {}
        # Per scalar, where it first appears (row, position in that row's record) and the
        # unit given there.
        self._first: dict[str, tuple[int, int, str]] = {}

    def add(self, record: RunRecord) -> None:
        """Take a run's record (of a run in the list; others are ignored)."""
        rows = self._rows.get(record.run_id)
        if not rows:
            return
        n, first_row = len(self._specs), rows[0]
        for r in rows:
            self._status[r], self._error[r] = record.status, record.error
        for pos, (scalar, value) in enumerate(record.scalars.items()):
            column = self._columns.get(scalar)
            if column is None:
                column = self._columns[scalar] = (array("d", bytes(8 * n)), bytearray(n))
            seen = self._first.get(scalar)
            if seen is None or (first_row, pos) < seen[:2]:
                self._first[scalar] = (first_row, pos, record.units.get(scalar, ""))
            values, present = column
            for r in rows:
                values[r] = value
                present[r] = 1

    def missing(self) -> list[str]:
        """The run ids with no record yet, in run order."""
        return [s.run_id for i, s in enumerate(self._specs) if self._status[i] is None]

    def to_arrow(self, parameters: Sequence[str], name: str) -> pa.Table:
        """The table of the runs with a record."""
        kept = [i for i, status in enumerate(self._status) if status is not None]
        specs = [self._specs[i] for i in kept]
        arrays: list[pa.Array] = [
            pa.array([s.index for s in specs], pa.int64()),
            pa.array([s.run_id for s in specs], pa.string()),
        ]
        fields = [pa.field("run", pa.int64()), pa.field("run_id", pa.string())]
        for key in parameters:
            arr = _parameter_column([s.parameters[key] for s in specs])
            arrays.append(arr)
            fields.append(pa.field(key, arr.type))
        for col, arr in (
            ("replication", pa.array([s.replication for s in specs], pa.int64())),
            ("seed", pa.array([s.seed for s in specs], pa.int64())),
            ("status", pa.array([self._status[i] for i in kept], pa.string())),
            ("error", pa.array([self._error[i] for i in kept], pa.string())),
        ):
            arrays.append(arr)
            fields.append(pa.field(col, arr.type))
        rows = np.array(kept, dtype=np.int64)
        for scalar, (_, _, unit) in sorted(self._first.items(), key=lambda item: item[1][:2]):
            column, present = self._columns[scalar]
            values = np.frombuffer(column, dtype=np.float64)[rows]
            absent = np.frombuffer(present, dtype=np.uint8)[rows] == 0
            arrays.append(pa.array(values, pa.float64(), mask=absent))
            fields.append(_scalar_field(scalar, unit))
        meta = {"name": name, "parameters": list(parameters)}
        schema = pa.schema(
            fields, metadata={_META_KEY: json.dumps(meta, sort_keys=True).encode("utf-8")}
        )
        return pa.Table.from_arrays(arrays, schema=schema)


def write_atomically(dest: Path, write: Any) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file to ``dest``."""
    tmp = dest.parent / f".{dest.name}.{os.getpid()}.tmp"
    try:
        write(tmp)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


# ------------------------------------------------------------------- reading


@dataclass
class SweepRuns:
    """A consolidated results table with what :func:`load_runs` knows about it."""

    frame: pd.DataFrame
    name: str
    parameters: list[str]
    units: dict[str, str]

    @property
    def scalars(self) -> list[str]:
        return list(self.units)


def read_runs(directory: str | os.PathLike[str]) -> SweepRuns:
    """Read ``DIR/runs.parquet`` with its parameters and units.

    Raises:
        StoreError: there is no readable ``runs.parquet``.
    """
    path = Path(directory) / RUNS_FILE
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise StoreError(f"{path}: no such file (run the sweep to completion first)") from None
    except (OSError, pa.ArrowException) as e:
        raise StoreError(f"{path}: cannot read: {e}") from None
    meta_raw = (table.schema.metadata or {}).get(_META_KEY)
    if meta_raw is None:
        raise StoreError(f"{path}: not an sctpsim sweep result (no sctpsim metadata)")
    meta = json.loads(meta_raw)
    units = {
        f.name: (f.metadata or {}).get(b"unit", b"").decode("utf-8")
        for f in table.schema
        if f.name not in RESERVED_COLUMNS and f.name not in meta["parameters"]
    }
    frame = table.to_pandas()
    frame.attrs["units"] = dict(units)
    frame.attrs["parameters"] = list(meta["parameters"])
    return SweepRuns(frame, str(meta.get("name", "")), list(meta["parameters"]), units)


def load_runs(directory: str | os.PathLike[str]) -> pd.DataFrame:
    """The runs of a finished sweep as a DataFrame, one row per run.

    ``df.attrs["units"]`` maps each scalar column to its unit and
    ``df.attrs["parameters"]`` lists the parameter columns.

    Raises:
        StoreError: ``DIR/runs.parquet`` is missing or unreadable.
    """
    return read_runs(directory).frame


def iter_run_files(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Every per-run file in a store (finished runs of any sweep written there)."""
    runs = Path(directory) / RUNS_DIR
    if runs.is_dir():
        yield from sorted(p for p in runs.iterdir() if _RUN_FILE.fullmatch(p.name))
