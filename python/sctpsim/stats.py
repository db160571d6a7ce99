"""Statistics over replications: n, mean, stdev and Student-t confidence intervals.

:func:`summarize` groups the runs of a sweep by parameter combination and, for each
metric, reports

* ``n``: successful runs with a value for the metric;
* ``mean`` and ``stdev`` (sample standard deviation, ``ddof=1``);
* ``ci95_low`` / ``ci95_high``: ``mean ± t(0.975, n-1) · stdev / sqrt(n)``, the
  95% confidence interval of the mean under Student's t distribution (NaN when
  ``n < 2``);
* ``failed``: runs of that combination that failed.

Metrics may be glob patterns (``flow/*/goodput``), expanded against the scalar
columns in their order.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "MetricError",
    "check_scalar",
    "confidence_interval",
    "expand_metrics",
    "series_scalars",
    "series_statistics",
    "summarize",
]

CONFIDENCE = 0.95


class MetricError(ValueError):
    """A scalar name in a sweep file names no scalar of its runs; ``key`` says where it
    is (``metrics[2]``, ``series.until``)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def confidence_interval(
    values: Sequence[float] | np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float, float, float, float, int]:
    """``(mean, stdev, low, high, n)`` of ``values`` (NaN values are ignored).

    The interval is Student's t for the mean; with fewer than two values the stdev
    and the interval are NaN.
    """
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan, 0
    mean = float(np.mean(x))
    if n < 2:
        return mean, math.nan, math.nan, math.nan, n
    # Student's t quantile: scipy.stats.t.ppf is scipy.special.stdtrit (the same bits), and
    # scipy.special imports in a quarter of the time. Imported here: workers never need it.
    from scipy.special import stdtrit

    stdev = float(np.std(x, ddof=1))
    half = float(stdtrit(n - 1, 0.5 + confidence / 2)) * stdev / math.sqrt(n)
    return mean, stdev, mean - half, mean + half, n


def expand_metrics(patterns: Sequence[str], scalars: Sequence[str]) -> list[str]:
    """Scalar columns matching ``patterns`` (exact names or globs), without duplicates.

    Raises:
        MetricError: a pattern matches no scalar (the message suggests close names).
    """
    out: list[str] = []
    for i, pattern in enumerate(patterns):
        if any(c in pattern for c in "*?["):
            matches = [s for s in scalars if fnmatch.fnmatchcase(s, pattern)]
        else:
            matches = [pattern] if pattern in scalars else []
        if not matches:
            raise MetricError(f"metrics[{i}]", _no_match(pattern, scalars))
        out.extend(m for m in matches if m not in out)
    return out


def check_scalar(key: str, name: str, scalars: Sequence[str]) -> None:
    """Raises :class:`MetricError` for ``key`` if ``name`` is none of ``scalars`` (the
    message suggests close names)."""
    if name not in scalars:
        raise MetricError(key, _no_match(name, scalars))


def _no_match(pattern: str, scalars: Sequence[str]) -> str:
    import difflib

    if not scalars:
        return f'"{pattern}" matches no scalar (no run succeeded)'
    close = difflib.get_close_matches(pattern, scalars, n=1, cutoff=0.6)
    if close:
        return f'"{pattern}" matches no scalar (did you mean "{close[0]}"?)'
    prefix = pattern.rsplit("/", 1)[0] + "/"
    same = [s.removeprefix(prefix) for s in scalars if s.startswith(prefix)]
    if same:
        return f'"{pattern}" matches no scalar ({prefix[:-1]} has: {", ".join(same)})'
    return f'"{pattern}" matches no scalar (see the columns of runs.parquet)'


def summarize(
    runs: pd.DataFrame,
    parameters: Sequence[str],
    metrics: Sequence[str],
    units: Mapping[str, str] | None = None,
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """One row per (parameter combination, metric), in run order.

    Args:
        runs: one row per run with the parameter columns, ``status`` and the scalar
            columns (e.g. from :func:`sctpsim.load_runs`).
        parameters: parameter columns to group by.
        metrics: scalar columns (already expanded).
        units: scalar -> unit, for the ``unit`` column (default ``runs.attrs["units"]``).

    Returns:
        Columns: the parameters, ``metric``, ``unit``, ``n``, ``failed``, ``mean``,
        ``stdev``, ``ci95_low``, ``ci95_high``.
    """
    units = dict(units if units is not None else runs.attrs.get("units", {}))
    params = list(parameters)
    rows: list[dict[str, object]] = []
    if params:
        groups = list(runs.groupby(params, sort=False, dropna=False))
    else:
        groups = [((), runs)]
    for key, group in groups:
        values = key if isinstance(key, tuple) else (key,)
        ok = group[group["status"] == "ok"]
        failed = int((group["status"] != "ok").sum())
        for metric in metrics:
            column = ok[metric] if metric in ok else pd.Series([], dtype="float64")
            mean, stdev, low, high, n = confidence_interval(
                column.to_numpy(dtype=np.float64, na_value=np.nan), confidence
            )
            row: dict[str, object] = dict(zip(params, values, strict=True))
            row.update(
                metric=metric,
                unit=units.get(metric, ""),
                n=n,
                failed=failed,
                mean=mean,
                stdev=stdev,
                ci95_low=low,
                ci95_high=high,
            )
            rows.append(row)
    columns = [*params, "metric", "unit", "n", "failed", "mean", "stdev", "ci95_low", "ci95_high"]
    out = pd.DataFrame(rows, columns=columns)
    return out.astype({"n": "int64", "failed": "int64"})


# ------------------------------------------------------------ time series


def series_statistics(
    times: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    stats: Sequence[str],
) -> dict[str, float]:
    """Statistics of one sampled time series (samples with a NaN value are skipped).

    ``count`` (samples), ``start`` and ``end`` (time of the first and last sample),
    ``max``, ``mean``, ``min``, ``stdev`` and ``variance`` (sample, ``ddof=1``) of the
    values: the columns of an OMNeT++ vector summary. Everything is NaN when there is
    no sample (``count`` is then 0); ``stdev``/``variance`` are NaN with one sample.
    """
    t = np.asarray(times, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(v)
    t, v = t[keep], v[keep]
    n = int(v.size)
    nan = math.nan
    table: dict[str, float] = {
        "count": float(n),
        "start": float(t[0]) if n else nan,
        "end": float(t[-1]) if n else nan,
        "max": float(np.max(v)) if n else nan,
        "mean": float(np.mean(v)) if n else nan,
        "min": float(np.min(v)) if n else nan,
        "stdev": float(np.std(v, ddof=1)) if n > 1 else nan,
        "variance": float(np.var(v, ddof=1)) if n > 1 else nan,
    }
    return {name: table[name] for name in stats}


def _stat_unit(stat: str, unit: str) -> str:
    if stat == "count":
        return "samples"
    if stat in ("start", "end"):
        return "s"
    if stat == "variance":
        return f"({unit})^2" if unit else ""
    return unit


def series_scalars(
    names: Sequence[tuple[str, str, str, str]],
    time_s: np.ndarray,
    series: np.ndarray,
    values: np.ndarray,
    patterns: Sequence[str],
    stats: Sequence[str],
    until: float | None = None,
) -> tuple[dict[str, float], dict[str, str]]:
    """Scalars ``kind/entity/metric_<stat>`` from the time series matching ``patterns``.

    Args:
        names: ``(kind, entity, metric, unit)`` of each series; ``series`` indexes it.
        time_s, series, values: one element per sample.
        patterns: series names (``kind/entity/metric``) or globs.
        stats: see :func:`series_statistics`.
        until: only samples at or before this time (seconds), or all.

    Returns:
        ``(values, units)`` keyed by scalar name, series in the order of ``names``.
    """
    out: dict[str, float] = {}
    units: dict[str, str] = {}
    if until is not None:
        keep = time_s <= until
        time_s, series, values = time_s[keep], series[keep], values[keep]
    for index, (kind, entity, metric, unit) in enumerate(names):
        name = f"{kind}/{entity}/{metric}"
        if not any(fnmatch.fnmatchcase(name, p) for p in patterns):
            continue
        sel = series == index
        for stat, value in series_statistics(time_s[sel], values[sel], stats).items():
            out[f"{name}_{stat}"] = value
            units[f"{name}_{stat}"] = _stat_unit(stat, unit)
    return out, units
