"""Plots of a sweep: a metric against a parameter, with confidence-interval error bars,
or a heatmap over two parameters.

:func:`plot_sweep` reads ``DIR/runs.parquet``, takes the successful runs, computes
the mean and the 95% Student-t confidence interval of the metric per x value (and
per ``hue`` value, one line each), and writes ``DIR/plots/<name>.png`` and
``.svg`` with matplotlib (Agg backend: no display needed). A point with one run has no
interval and gets no error bar; the title says so. ``kind="heatmap"`` draws
the mean per (hue, x) cell instead (:func:`draw_heatmap`, which the study reports use
too); several metrics give one panel each.

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

__all__ = ["PlotError", "draw_heatmap", "parse_quantity", "plot_sweep"]

PLOTS_DIR = "plots"
#: What ``plot_sweep(kind=...)`` draws: lines with error bars, or a heatmap.
KINDS = ("line", "heatmap")

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


def _match_key(value: Any) -> str:
    """A parameter value as text that numerically equal numbers share: ``0`` and ``0.0``
    give ``"0"``, ``1`` and ``1.0`` give ``"1"``, so runs match whether a sweep stored a
    parameter as integers (``[0, 1]``) or as floats (``[0, 0.01, 1]``). Text that is a
    number (a ``--where`` value) matches that number; other values give :func:`_text`."""
    if isinstance(value, str):
        for kind in (int, float):
            try:
                value = kind(value)
                break
            except ValueError:
                continue
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        return _text(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


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


def draw_heatmap(
    ax: Any,
    values: np.ndarray,
    rows: Sequence[str],
    columns: Sequence[str],
    *,
    label: str,
    diverging: bool = False,
    limit: float | None = None,
    digits: int = 3,
) -> None:
    """A heatmap of ``values`` (rows x columns) on ``ax``, each cell annotated with its
    number; NaN cells are left grey and marked ``–`` (never drawn as a value).

    ``diverging`` centres the colour scale on 0 (blue below, red above), for differences;
    ``limit`` fixes its range to ±limit (to share one scale between panels).
    """
    import matplotlib.colors as mcolors
    from matplotlib import colormaps

    data = np.ma.masked_invalid(np.asarray(values, dtype=np.float64))
    cmap = colormaps["RdBu_r" if diverging else "viridis"].with_extremes(bad="#e6e6e6")
    finite = data.compressed()
    norm: Any = None
    if finite.size:
        lo, hi = float(finite.min()), float(finite.max())
        if diverging:
            bound = limit or max(abs(lo), abs(hi)) or 1.0
            norm = mcolors.TwoSlopeNorm(0.0, -bound, bound)
        elif lo == hi:
            norm = mcolors.Normalize(lo - 1.0, hi + 1.0)
    image = ax.imshow(data, cmap=cmap, norm=norm, aspect="auto")
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.05, pad=0.03)
    bar.set_label(label, fontsize=8)
    ax.set_xticks(range(len(columns)), list(columns))
    ax.set_yticks(range(len(rows)), list(rows))
    ax.tick_params(length=0)
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            if data.mask is not np.ma.nomask and data.mask[i, j]:
                ax.text(j, i, "–", ha="center", va="center", fontsize=9, color="#555555")
                continue
            v = float(data[i, j])
            r, g, b, _ = cmap(image.norm(v))
            ink = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
            ax.text(j, i, _short(v, digits), ha="center", va="center", fontsize=8, color=ink)


def _short(value: float, digits: int) -> str:
    """A cell annotation: ``digits`` significant digits, with k/M/G for large values
    (``1.96M`` rather than ``1.96e+06``)."""
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g}{prefix}"
    return f"{value:.{digits}g}"


def _safe(name: str) -> str:
    name = name.replace("[", "").replace("]", "")
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("._") or "x"


def plot_sweep(
    directory: str | os.PathLike[str],
    x: str,
    y: str | Sequence[str],
    hue: str | None = None,
    where: Mapping[str, str] | None = None,
    out: str | os.PathLike[str] | None = None,
    kind: str = "line",
) -> list[Path]:
    """Draw metric ``y`` against parameter ``x``; return the files written.

    ``kind="line"`` draws the mean with 95% CI error bars, one line per ``hue`` value;
    ``kind="heatmap"`` draws the mean as a heatmap with the ``x`` values as columns and
    the ``hue`` values as rows (both are then required). Several metrics (``y`` a list)
    give one panel each in the same figure.

    Args:
        directory: a sweep's results directory (with ``runs.parquet``).
        x: a parameter key path, e.g. ``"links[1].delay"``.
        y: a scalar column, e.g. ``"flow/path1/goodput"``, or several.
        hue: another parameter: one line (or heatmap row) per value.
        where: parameter -> value (as text) to select runs when more parameters vary.
        out: output path without suffix (default ``DIR/plots/<y>_vs_<x>[_by_<hue>]``,
            ``<y>_heatmap_<x>_by_<hue>`` for a heatmap, the metrics joined by ``+``, then
            ``_where_<param>=<value>`` for each ``where``); ``.png`` and ``.svg`` are
            written.
        kind: ``"line"`` or ``"heatmap"``.

    Raises:
        StoreError: no readable ``runs.parquet``.
        PlotError: an unknown parameter or metric, unpinned varying parameters, or a
            bad combination (a heatmap without ``hue``, a metric given twice).
    """
    ys = [y] if isinstance(y, str) else list(y)
    if kind not in KINDS:
        raise PlotError("--kind", f'"{kind}" is not a kind of plot (kinds: {", ".join(KINDS)})')
    if not ys:
        raise PlotError("--y", "give at least one metric")
    twice = [m for i, m in enumerate(ys) if m in ys[:i]]
    if twice:
        raise PlotError("--y", f'"{twice[0]}" is given twice')
    if kind == "heatmap" and hue is None:
        raise PlotError(
            "--kind", "a heatmap needs both --x (its columns) and --hue (its rows); --hue is missing"
        )
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
    for metric in ys:
        if metric not in loaded.units:
            import difflib

            close = difflib.get_close_matches(metric, list(loaded.units), n=1, cutoff=0.6)
            hint = (
                f' (did you mean "{close[0]}"?)' if close else " (see the columns of runs.parquet)"
            )
            raise PlotError("--y", f'"{metric}" is not a metric of this sweep{hint}')
    for key, value in (where or {}).items():
        check_param("--where", key)
        wanted = _match_key(value)
        chosen = [_text(v) == value or _match_key(v) == wanted for v in df[key]]
        if not any(chosen):
            present = list(dict.fromkeys(_text(v) for v in df[key]))
            raise PlotError("--where", f'{key} is never "{value}" (values: {", ".join(present)})')
        df = df[chosen]
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
    hues: list[Any] = list(dict.fromkeys(df[hue])) if hue else [None]

    def stats(metric: str, h: Any, xv: Any) -> tuple[float, float, float, int]:
        sel = ok if h is None else ok[ok[hue].map(_text) == _text(h)]
        vals = sel[sel[x].map(_text) == _text(xv)][metric].to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        mean, _, low, high, n = confidence_interval(vals)
        return mean, low, high, n

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    def label(metric: str) -> str:
        unit = loaded.units.get(metric, "")
        return f"{metric} [{unit}]" if unit else metric

    with matplotlib.rc_context({"svg.hashsalt": "sctpsim", "figure.dpi": 100}):
        if kind == "heatmap":
            fig = Figure(figsize=(7.5, (0.42 * len(hues) + 1.6) * len(ys) + 0.4))
        else:
            fig = Figure(figsize=(7, 3.2 * len(ys) + 1.3 if len(ys) > 1 else 4.5))
        axes = fig.subplots(len(ys), 1, squeeze=False, sharex=kind == "line")[:, 0]
        drawn = without_ci = 0  # line points, and those with one run (no interval)
        for ax, metric in zip(axes, ys, strict=True):
            if kind == "heatmap":
                values = np.array(
                    [[stats(metric, h, xv)[0] for xv in x_values] for h in hues]
                )
                draw_heatmap(
                    ax,
                    values,
                    [_text(h) for h in hues],
                    [_text(v) for v in x_values],
                    label=f"mean {label(metric)}",
                )
                ax.set_xlabel(x)
                ax.set_ylabel(str(hue))
                ax.set_title(label(metric), fontsize=10)
            else:
                n_points, n_no_ci = _line_panel(
                    ax, x_values, hues, hue, lambda h, xv, m=metric: stats(m, h, xv)
                )
                drawn += n_points
                without_ci += n_no_ci
                ax.set_ylabel(label(metric))
        if kind == "line":
            _, x_unit, ticks = _axis(x_values)
            axes[-1].set_xlabel(f"{x} [{x_unit}]" if x_unit else x)
            if ticks is not None:
                axes[-1].set_xticks(_axis(x_values)[0], ticks)
        if kind == "heatmap":
            what = "mean"
        elif drawn and without_ci == drawn:
            what = "mean (one run per point: no confidence interval)"
        elif without_ci:
            what = "mean and 95% confidence interval (none where a point has one run)"
        else:
            what = "mean and 95% confidence interval"
        # The slice --where pins is part of what the figure shows, and of its name: two
        # slices of one sweep are two files.
        pinned = ", ".join(f"{k} = {v}" for k, v in (where or {}).items())
        title = f"{loaded.name}: {what}" + (f"\n({pinned})" if pinned else "")
        if len(axes) == 1 and kind == "line":
            axes[0].set_title(title)
        else:
            fig.suptitle(title, fontsize=11)
        fig.tight_layout()
        metrics = "+".join(_safe(m) for m in ys)
        default = (
            f"{metrics}_heatmap_{_safe(x)}_by_{_safe(str(hue))}"
            if kind == "heatmap"
            else f"{metrics}_vs_{_safe(x)}" + (f"_by_{_safe(hue)}" if hue else "")
        ) + "".join(f"_where_{_safe(k)}={_safe(v)}" for k, v in (where or {}).items())
        stem = Path(out) if out is not None else Path(directory) / PLOTS_DIR / default
        png, svg = save_figure(fig, stem)
    return [png, svg]


def save_figure(fig: Any, stem: Path) -> tuple[Path, Path]:
    """Write ``fig`` as ``<stem>.png`` and ``<stem>.svg`` (creating the folder), the same bytes
    on every run: no software tag in the PNG, no date in the SVG (its element ids come from
    the ``svg.hashsalt`` rc setting of whoever drew it)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    png, svg = stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".svg")
    fig.savefig(png, metadata={"Software": None})
    fig.savefig(svg, metadata={"Date": None})
    return png, svg


def _line_panel(
    ax: Any, x_values: list[Any], hues: list[Any], hue: str | None, stats: Any
) -> tuple[int, int]:
    """One metric against x with CI error bars, a line per hue value, its points joined
    in the order of their x positions (not the sweep's). A point without a confidence
    interval (one run) gets no error bar. Returns the points drawn and how many of them
    have no interval."""
    positions, _, _ = _axis(x_values)
    pos = dict(zip(map(_text, x_values), positions, strict=True))
    ordered = sorted(x_values, key=lambda v: pos[_text(v)])
    drawn = without_ci = 0
    for h in hues:
        xs, means, lo, hi = [], [], [], []
        for xv in ordered:
            mean, low, high, n = stats(h, xv)
            if n == 0:
                continue
            drawn += 1
            xs.append(pos[_text(xv)])
            means.append(mean)
            # NaN: matplotlib draws no bar (and no caps) for that point.
            lo.append(mean - low)
            hi.append(high - mean)
            without_ci += math.isnan(low) or math.isnan(high)
        label = None if h is None else f"{hue} = {_text(h)}"
        ax.errorbar(xs, means, yerr=[lo, hi], marker="o", capsize=4, label=label)
    ax.grid(True, alpha=0.3)
    if hue:
        ax.legend()
    return drawn, without_ci
