"""Plots of a sweep: a metric against a parameter, with confidence-interval error bars.

:func:`plot_sweep` reads ``DIR/runs.parquet``, takes the successful runs, computes
the mean and the 95% Student-t confidence interval of the metric per x value (and
per ``hue`` value, one line each), and writes ``DIR/plots/<name>.png`` and
``.svg`` with matplotlib (Agg backend: no display needed).

The x axis is numeric when the parameter's values are numbers or quantities with
units (``"10ms"``, ``"4Mbps"``, ``"64KiB"``, ``"1%"``, converted to s, bit/s, B or a
fraction); otherwise the values are placed evenly, in sweep order. Parameters that
vary but are neither ``x`` nor ``hue`` must be pinned with ``where`` (otherwise runs
with different settings would be averaged together).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sctpsim.stats import confidence_interval
from sctpsim.store import read_runs

__all__ = ["PlotError", "parse_quantity", "plot_sweep"]

PLOTS_DIR = "plots"

_UNITS: dict[str, tuple[float, str]] = {
    "ns": (1e-9, "s"),
    "us": (1e-6, "s"),
    "µs": (1e-6, "s"),
    "ms": (1e-3, "s"),
    "s": (1.0, "s"),
    "min": (60.0, "s"),
    "h": (3600.0, "s"),
    "bps": (1.0, "bit/s"),
    "kbps": (1e3, "bit/s"),
    "Mbps": (1e6, "bit/s"),
    "Gbps": (1e9, "bit/s"),
    "Tbps": (1e12, "bit/s"),
    "bit/s": (1.0, "bit/s"),
    "kbit/s": (1e3, "bit/s"),
    "Mbit/s": (1e6, "bit/s"),
    "Gbit/s": (1e9, "bit/s"),
    "Tbit/s": (1e12, "bit/s"),
    "B": (1.0, "B"),
    "kB": (1e3, "B"),
    "MB": (1e6, "B"),
    "GB": (1e9, "B"),
    "KiB": (1024.0, "B"),
    "MiB": (1024.0**2, "B"),
    "GiB": (1024.0**3, "B"),
    "%": (0.01, "1"),
}
_QUANTITY = re.compile(
    r"\s*([-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/%]+)\s*"
)


class PlotError(ValueError):
    """A bad plot request: ``option`` is the offending option (``--x``, ``--where``, ...)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option


def parse_quantity(text: str) -> tuple[float, str] | None:
    """``"20ms"`` -> ``(0.02, "s")``; ``None`` when ``text`` is not a quantity."""
    m = _QUANTITY.fullmatch(text)
    if m is None or m.group(2) not in _UNITS:
        return None
    factor, unit = _UNITS[m.group(2)]
    return float(m.group(1).replace("_", "")) * factor, unit


def _text(value: Any) -> str:
    """A parameter value as a user types it in ``--where`` and reads it in a legend."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def _axis(values: Sequence[Any]) -> tuple[list[float], str, list[str] | None]:
    """x positions, the axis unit, and tick labels when the axis is categorical."""
    if all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
        for v in values
    ):
        return [float(v) for v in values], "", None
    parsed = [parse_quantity(v) if isinstance(v, str) else None for v in values]
    units = {p[1] for p in parsed if p is not None}
    if all(p is not None for p in parsed) and len(units) == 1:
        return [p[0] for p in parsed if p is not None], units.pop(), None
    return [float(i) for i in range(len(values))], "", [_text(v) for v in values]


def _safe(name: str) -> str:
    name = name.replace("[", "").replace("]", "")
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("._") or "x"


def plot_sweep(
    directory: str | os.PathLike[str],
    x: str,
    y: str,
    hue: str | None = None,
    where: Mapping[str, str] | None = None,
    out: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """Draw metric ``y`` against parameter ``x`` with 95% CI error bars; return the files.

    Args:
        directory: a sweep's results directory (with ``runs.parquet``).
        x: a parameter key path, e.g. ``"links[1].delay"``.
        y: a scalar column, e.g. ``"flow/path1/goodput"``.
        hue: another parameter: one line per value.
        where: parameter -> value (as text) to select runs when more parameters vary.
        out: output path without suffix (default ``DIR/plots/<y>_vs_<x>[_by_<hue>]``);
            ``.png`` and ``.svg`` are written.

    Raises:
        StoreError: no readable ``runs.parquet``.
        PlotError: an unknown parameter or metric, or unpinned varying parameters.
    """
    loaded = read_runs(directory)
    df = loaded.frame
    params = loaded.parameters

    def check_param(option: str, name: str) -> None:
        if name not in params:
            known = ", ".join(params) if params else "none"
            raise PlotError(
                option, f'"{name}" is not a parameter of this sweep (parameters: {known})'
            )

    check_param("--x", x)
    if hue is not None:
        check_param("--hue", hue)
        if hue == x:
            raise PlotError("--hue", f'"{hue}" is already the x axis')
    if y not in loaded.units:
        import difflib

        close = difflib.get_close_matches(y, list(loaded.units), n=1, cutoff=0.6)
        hint = f' (did you mean "{close[0]}"?)' if close else " (see the columns of runs.parquet)"
        raise PlotError("--y", f'"{y}" is not a metric of this sweep{hint}')
    for key, value in (where or {}).items():
        check_param("--where", key)
        present = list(dict.fromkeys(_text(v) for v in df[key]))
        if value not in present:
            raise PlotError("--where", f'{key} is never "{value}" (values: {", ".join(present)})')
        df = df[[_text(v) == value for v in df[key]]]
    # A parameter not on the plot must take one value per (x, hue) point; zipped
    # partners of x or hue do, because they vary together with them.
    on_plot = [x, *((hue,) if hue else ())]
    keys = df[on_plot].apply(lambda col: col.map(_text))
    varying = [
        p
        for p in params
        if p not in on_plot
        and df[p].map(_text).groupby([keys[c] for c in on_plot]).nunique().max() > 1
    ]
    if varying:
        detail = "; ".join(f"{p} ({', '.join(dict.fromkeys(df[p].map(_text)))})" for p in varying)
        raise PlotError(
            "--x",
            f"other parameters vary too: {detail}; pick one value with --where KEY=VALUE or use --hue",
        )
    ok = df[df["status"] == "ok"]
    x_values = list(dict.fromkeys(df[x]))
    positions, x_unit, ticks = _axis(x_values)
    pos = dict(zip(map(_text, x_values), positions, strict=True))
    hues: list[Any] = list(dict.fromkeys(df[hue])) if hue else [None]

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.hashsalt": "sctpsim", "figure.dpi": 100}):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for h in hues:
            sel = ok if h is None else ok[ok[hue].map(_text) == _text(h)]
            xs, means, lo, hi = [], [], [], []
            for xv in x_values:
                vals = sel[sel[x].map(_text) == _text(xv)][y].to_numpy(
                    dtype=np.float64, na_value=np.nan
                )
                mean, _, low, high, n = confidence_interval(vals)
                if n == 0:
                    continue
                xs.append(pos[_text(xv)])
                means.append(mean)
                lo.append(0.0 if math.isnan(low) else mean - low)
                hi.append(0.0 if math.isnan(high) else high - mean)
            label = None if h is None else f"{hue} = {_text(h)}"
            ax.errorbar(xs, means, yerr=[lo, hi], marker="o", capsize=4, label=label)
        ax.set_xlabel(f"{x} [{x_unit}]" if x_unit else x)
        y_unit = loaded.units.get(y, "")
        ax.set_ylabel(f"{y} [{y_unit}]" if y_unit else y)
        if ticks is not None:
            ax.set_xticks(positions, ticks)
        ax.set_title(f"{loaded.name}: mean and 95% confidence interval")
        ax.grid(True, alpha=0.3)
        if hue:
            ax.legend()
        fig.tight_layout()
        stem = (
            Path(out)
            if out is not None
            else Path(directory)
            / PLOTS_DIR
            / (f"{_safe(y)}_vs_{_safe(x)}" + (f"_by_{_safe(hue)}" if hue else ""))
        )
        stem.parent.mkdir(parents=True, exist_ok=True)
        png = stem.with_name(stem.name + ".png")
        svg = stem.with_name(stem.name + ".svg")
        fig.savefig(png, metadata={"Software": None})
        fig.savefig(svg, metadata={"Date": None})
        plt.close(fig)
    return [png, svg]
