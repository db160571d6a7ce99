"""Run-to-run comparison: ``sctpsim compare DIR_A DIR_B``.

Two run directories (``sctpsim run``: ``scalars.csv``) are compared scalar by scalar;
two sweep directories (``sctpsim sweep``: ``runs.parquet``) run by run, a run of A
matched with the run of B that has the same parameter values (numbers by value: ``0``
matches ``0.0``) and replication, then scalar by scalar. Each pair gets its absolute
difference ``b − a`` and its relative difference ``(b − a) / |a|``.

Two values are equal when ``|b − a| <= rtol * max(|a|, |b|)`` (``rtol = 0``: exactly
equal); two missing values (NaN, or a scalar a run did not produce) are equal, a value
on one side only is not. The results are equal when every pair is and nothing is left
unmatched (a scalar, or a sweep's run, on one side only).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from sctpsim.plot import _match_key, _text
from sctpsim.results import SCALARS_FILE, read_scalars, scalar_name
from sctpsim.store import RUNS_FILE, StoreError, read_runs

__all__ = ["CompareError", "ResultsDiff", "compare_results"]

#: Columns of :attr:`ResultsDiff.frame` after the sweep's key columns.
DIFF_COLUMNS = ("scalar", "unit", "a", "b", "abs_diff", "rel_diff", "equal")


class CompareError(ValueError):
    """Input that cannot be compared (not a result directory, a run against a sweep,
    sweeps of different parameters): one line for the user."""


@dataclass
class ResultsDiff:
    """What :func:`compare_results` found.

    Attributes:
        kind: ``"run"`` or ``"sweep"``.
        keys: the columns that identify a sweep's run (its parameters and
            ``replication``, their values as text, as the sweep file writes them);
            empty for two runs.
        frame: one row per scalar (per matched run of a sweep): the key columns, then
            :data:`DIFF_COLUMNS`. A scalar on one side only has NaN on the other.
        only_a: runs of sweep A with no match in B, as ``key=value, ...`` text.
        only_b: runs of sweep B with no match in A.
        rtol: the relative tolerance used.
    """

    kind: Literal["run", "sweep"]
    keys: list[str]
    frame: pd.DataFrame
    only_a: list[str]
    only_b: list[str]
    rtol: float

    @property
    def differences(self) -> pd.DataFrame:
        """The rows that are not equal."""
        return self.frame[~self.frame["equal"]]

    @property
    def equal(self) -> bool:
        """Every pair equal within ``rtol`` and nothing unmatched."""
        return bool(self.frame["equal"].all()) and not self.only_a and not self.only_b


def _kind(directory: Path) -> Literal["run", "sweep"]:
    if (directory / SCALARS_FILE).is_file():
        return "run"
    if (directory / RUNS_FILE).is_file():
        return "sweep"
    if directory.exists() and not directory.is_dir():
        raise CompareError(f"{directory}: not a directory (expected a run or sweep directory)")
    if not directory.is_dir():
        raise CompareError(f"{directory}: no such directory")
    raise CompareError(
        f"{directory}: not a run or sweep directory (no {SCALARS_FILE} or {RUNS_FILE})"
    )


def _equal(a: np.ndarray, b: np.ndarray, rtol: float) -> np.ndarray:
    both_missing = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):
        close = np.abs(b - a) <= rtol * np.maximum(np.abs(a), np.abs(b))
    return both_missing | (a == b) | close


def _pairs(
    a: pd.Series, b: pd.Series, units: dict[str, str], rtol: float
) -> pd.DataFrame:
    """Scalar name -> value on each side, as rows of :data:`DIFF_COLUMNS`."""
    names = list(dict.fromkeys([*a.index, *b.index]))
    va = a.reindex(names).to_numpy(dtype=np.float64, na_value=np.nan)
    vb = b.reindex(names).to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = vb - va
        rel = np.where(np.abs(va) > 0, diff / np.abs(va), np.where(diff == 0, 0.0, np.nan))
    one_side = np.array([(n in a.index) != (n in b.index) for n in names], dtype=bool)
    return pd.DataFrame(
        {
            "scalar": names,
            "unit": [units.get(n, "") for n in names],
            "a": va,
            "b": vb,
            "abs_diff": diff,
            "rel_diff": rel,
            "equal": _equal(va, vb, rtol) & ~one_side,
        }
    )


def _run_scalars(directory: Path) -> tuple[pd.Series, dict[str, str]]:
    path = directory / SCALARS_FILE
    try:
        frame = read_scalars(directory)
    except OSError as e:
        raise CompareError(f"{path}: cannot read: {e}") from None
    except ValueError as e:  # read, but not a run's scalars table
        raise CompareError(f"{path}: {' '.join(str(e).split())}") from None
    names = [
        scalar_name(k, e, m)
        for k, e, m in zip(frame["kind"], frame["entity"], frame["metric"], strict=True)
    ]
    return pd.Series(frame["value"].to_numpy(), index=names), dict(
        zip(names, frame["unit"], strict=True)
    )


def _sweep(directory: Path) -> tuple[pd.DataFrame, list[str], dict[str, str]]:
    try:
        runs = read_runs(directory)
    except StoreError as e:
        raise CompareError(str(e)) from None
    return runs.frame, runs.parameters, runs.units


def _label(keys: Sequence[str], key: tuple[str, ...]) -> str:
    return ", ".join(f"{k}={v}" for k, v in zip(keys, key, strict=True))


def compare_results(
    a: str | os.PathLike[str], b: str | os.PathLike[str], rtol: float = 0.0
) -> ResultsDiff:
    """Compare two run directories or two sweep directories (see the module docs).

    Raises:
        CompareError: a directory is neither, the two are of different kinds, the
            sweeps vary different parameters, or ``rtol`` is negative.
    """
    if not rtol >= 0 or math.isinf(rtol):
        raise CompareError(f"--rtol must be a finite number >= 0, not {rtol}")
    da, db = Path(a), Path(b)
    ka, kb = _kind(da), _kind(db)
    if ka != kb:
        raise CompareError(f"{da} is a {ka} directory but {db} is a {kb} directory")
    if ka == "run":
        (sa, ua), (sb, ub) = _run_scalars(da), _run_scalars(db)
        frame = _pairs(sa, sb, {**ub, **ua}, rtol)
        return ResultsDiff("run", [], frame, [], [], rtol)

    fa, pa, ua = _sweep(da)
    fb, pb, ub = _sweep(db)
    if sorted(pa) != sorted(pb):
        raise CompareError(
            f"the sweeps vary different parameters ({da}: {', '.join(pa) or 'none'}; "
            f"{db}: {', '.join(pb) or 'none'}), so their runs cannot be matched"
        )
    keys = [*pa, "replication"]
    units = {**ub, **ua}
    scalars_a, scalars_b = list(ua), list(ub)

    def index(frame: pd.DataFrame) -> dict[tuple[str, ...], tuple[tuple[str, ...], pd.Series]]:
        """Runs by their parameter values as numbers compare (0 and 0.0 are one key),
        with the values as the sweep wrote them."""
        out: dict[tuple[str, ...], tuple[tuple[str, ...], pd.Series]] = {}
        for _, row in frame.iterrows():
            out[tuple(_match_key(row[k]) for k in keys)] = (
                tuple(_text(row[k]) for k in keys),
                row,
            )
        return out

    ia, ib = index(fa), index(fb)
    parts: list[pd.DataFrame] = []
    for match, (key, row_a) in ia.items():
        if match not in ib:
            continue
        row_b = ib[match][1]
        # A scalar a run did not produce is null in runs.parquet: treat it as absent.
        sa = row_a[scalars_a].astype("float64").dropna()
        sb = row_b[scalars_b].astype("float64").dropna()
        part = _pairs(sa, sb, units, rtol)
        status_a, status_b = str(row_a["status"]), str(row_b["status"])
        if status_a != status_b:
            status = pd.DataFrame(
                [
                    {
                        "scalar": "status",
                        "unit": f"{status_a} / {status_b}",
                        "a": math.nan,
                        "b": math.nan,
                        "abs_diff": math.nan,
                        "rel_diff": math.nan,
                        "equal": False,
                    }
                ]
            )
            part = pd.concat([status, part], ignore_index=True)
        for k, v in reversed(list(zip(keys, key, strict=True))):
            part.insert(0, k, v)
        parts.append(part)
    columns = [*keys, *DIFF_COLUMNS]
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    frame["equal"] = frame["equal"].astype(bool)
    only_a = [_label(keys, key) for match, (key, _) in ia.items() if match not in ib]
    only_b = [_label(keys, key) for match, (key, _) in ib.items() if match not in ia]
    return ResultsDiff("sweep", keys, frame[columns], only_a, only_b, rtol)
