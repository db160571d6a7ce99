"""Figures of one run (matplotlib): paths, flows, queues and time-sequence graphs.

Each function takes a :class:`~sctpsim.results.RunResult` and returns a matplotlib
``Figure`` made without pyplot (nothing is shown, no global state: ``fig.savefig`` writes
it, a notebook displays it). They are what
:meth:`RunResult.paths`, :meth:`~RunResult.flows`, :meth:`~RunResult.queues` and
:meth:`~RunResult.sequence` return and what ``sctpsim show`` puts on its page.

Long runs stay cheap: every line is reduced to its min/max envelope over the figure's
pixel columns (:func:`sctpsim.envelope.envelope`) before matplotlib sees it, so a figure
never draws more than two points per pixel column per line, and spikes and dips survive.

Markers: faults (from the ``fault`` events) and, for an SCTP association, its T3-rtx
expiries, path state changes (PF, inactive, active again), failover and switch-back of
the data path and primary changes (from the ``sctp`` events) are vertical lines with a
label, drawn when ``record.events`` logged those kinds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sctpsim.envelope import envelope

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from sctpsim.results import RunResult

__all__ = [
    "Marker",
    "NotRecorded",
    "SeriesIndex",
    "association_names",
    "flows_figure",
    "markers",
    "paths_figure",
    "queues_figure",
    "sequence_figure",
    "queued_interfaces",
    "tcp_figure",
    "tcp_names",
]

DPI = 100
#: Path colours: matplotlib's default cycle, path i gets colour i.
_COLOURS = ("C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9")
_FAULT_COLOUR = "#b00020"
_EVENT_COLOUR = "#555555"
#: At most this many marker labels are written (all markers are drawn).
_MAX_LABELS = 40
#: Horizontal room a marker label takes, in pixels.
_LABEL_PX = 11
#: Legends sit to the right of the axes, never over the data.
_LEGEND: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.005, 1.0), "borderaxespad": 0.0, "fontsize": 7}


def _legend(ax: Axes, **style: Any) -> None:
    """The legend of ``ax`` beside it, when something on it has a label (matplotlib
    warns about an empty legend: a WLAN radio's queue, for one, has no time series)."""
    if ax.get_legend_handles_labels()[1]:
        ax.legend(**_LEGEND, **style)


class NotRecorded(LookupError):
    """The run did not record what a figure needs; the message says how to record it."""


# ------------------------------------------------------------------ data access


class SeriesIndex:
    """The run's time series by (kind, entity, metric), as numpy arrays (no long
    DataFrame is built: cheap for long runs)."""

    def __init__(self, result: RunResult) -> None:
        names, time_s, series, value = result.series_arrays()
        order = np.argsort(series, kind="stable")
        bounds = np.searchsorted(series[order], np.arange(len(names) + 1))
        self._data: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
        self.units: dict[tuple[str, str, str], str] = {}
        self.entities: dict[str, list[str]] = {}
        for i, (kind, entity, metric, unit) in enumerate(names):
            rows = order[bounds[i] : bounds[i + 1]]
            self._data[(kind, entity, metric)] = (time_s[rows], value[rows])
            self.units[(kind, entity, metric)] = unit
            known = self.entities.setdefault(kind, [])
            if entity not in known:
                known.append(entity)
        self.end = float(time_s.max()) if len(time_s) else 0.0

    @classmethod
    def of(cls, result: RunResult) -> SeriesIndex:
        """The index of ``result``, built once and kept with it."""
        cached = result.__dict__.get("_series_index")
        if cached is None:
            cached = result.__dict__["_series_index"] = cls(result)
        return cached

    def __bool__(self) -> bool:
        return bool(self._data)

    def get(self, kind: str, entity: str, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``(time_s, value)`` of one series, or ``None``."""
        return self._data.get((kind, entity, metric))


def association_names(result: RunResult, series: SeriesIndex | None = None) -> list[str]:
    """SCTP associations with per-path series, senders first (an association that sent
    data; receivers only when there is no sender)."""
    series = series or SeriesIndex.of(result)
    found: list[str] = []
    for entity in series.entities.get("sctp_path", []):
        assoc, sep, _ = entity.rpartition("/path")
        if sep and assoc not in found:
            found.append(assoc)
    senders = [a for a in found if result.scalar_or_nan("sctp", a, "sent_bytes") > 0]
    return senders or found


def tcp_names(series: SeriesIndex) -> list[str]:
    """TCP connections with time series (by flow name)."""
    return list(series.entities.get("tcp", []))


def _paths_of(series: SeriesIndex, assoc: str) -> list[tuple[int, str]]:
    """(path number, entity) of an association's paths, by number."""
    out = []
    for entity in series.entities.get("sctp_path", []):
        head, sep, tail = entity.rpartition("/path")
        if sep and head == assoc and tail.isdigit():
            out.append((int(tail), entity))
    return sorted(out)


# ---------------------------------------------------------------------- markers


@dataclass(frozen=True)
class Marker:
    """A labelled instant: a fault or an SCTP/TCP event."""

    time_s: float
    label: str
    fault: bool = False


_PATH_STATE = re.compile(r"PathStateChanged \{ path: (\d+), from: (\w+), to: (\w+) \}")
_T3 = re.compile(r"T3Timeout \{ path: (\d+)")
_DATA_PATH = re.compile(r"DataPathChanged \{ from: (\d+), to: (\d+) \}")
_PRIMARY = re.compile(r"PrimaryChanged \{ from: (\d+), to: (\d+) \}")
_STATES = {"Active": "active", "PotentiallyFailed": "PF", "Inactive": "inactive"}


def markers(result: RunResult, entity: str | None = None) -> list[Marker]:
    """Faults, and the events of ``entity`` (an SCTP association or a TCP connection)
    worth a line on a time axis: T3-rtx expiries, path state changes, failover and
    switch-back of the data path, primary changes; TCP timeouts."""
    events = result.events
    if not len(events):
        return []
    out: list[Marker] = []
    for t, detail, ent in events.loc[events["kind"] == "fault", ["time_s", "detail", "entity"]].itertuples(
        index=False
    ):
        out.append(Marker(float(t), f"{detail.removeprefix('action=')} {ent}", fault=True))
    if entity is None:
        return out
    mine = events[(events["entity"] == entity) & events["kind"].isin(["sctp", "tcp"])]
    home: str | None = None
    for t, kind, detail in mine[["time_s", "kind", "detail"]].itertuples(index=False):
        label = None
        if kind == "tcp":
            if detail.startswith("loss=timeout"):
                label = "RTO"
        elif m := _T3.match(detail):
            label = f"T3 p{m.group(1)}"
        elif m := _PATH_STATE.match(detail):
            label = f"p{m.group(1)} {_STATES.get(m.group(3), m.group(3))}"
        elif m := _DATA_PATH.match(detail):
            home = home or m.group(1)
            label = f"switch-back p{m.group(2)}" if m.group(2) == home else f"failover p{m.group(1)}→p{m.group(2)}"
        elif m := _PRIMARY.match(detail):
            label = f"primary p{m.group(2)}"
        if label is not None:
            out.append(Marker(float(t), label))
    return sorted(out, key=lambda m: m.time_s)


def _draw_markers(axes: Sequence[Axes], marks: Iterable[Marker], x_range: tuple[float, float]) -> None:
    """Each marker as a vertical line through ``axes``; labels above the top one."""
    marks = sorted(marks, key=lambda m: m.time_s)
    for ax in axes:
        for m in marks:
            ax.axvline(
                m.time_s,
                color=_FAULT_COLOUR if m.fault else _EVENT_COLOUR,
                lw=1.0 if m.fault else 0.7,
                ls="-" if m.fault else ":",
                zorder=0.5,
            )
    top = axes[0]
    x0, x1 = x_range
    pixels = top.get_position().width * top.figure.bbox.width
    scale = pixels / (x1 - x0) if x1 > x0 else 0.0
    # Markers at one instant share a label; a label that would overlap the previous one
    # moves right just enough (a label is a line of text turned upright, ~10 px wide).
    groups: list[list[Marker]] = []
    for m in marks:
        if groups and (m.time_s - groups[-1][0].time_s) * scale < 0.5:
            groups[-1].append(m)
        else:
            groups.append([m])
    last = -1e9
    for ms in groups[:_MAX_LABELS]:
        t = ms[0].time_s
        at = (t - x0) * scale
        shift = max(0.0, last + _LABEL_PX - at)
        last = at + shift
        text = ", ".join(dict.fromkeys(m.label for m in ms))
        if len(text) > _LABEL_CHARS:
            text = text[: _LABEL_CHARS - 1] + "…"
        top.annotate(
            text,
            xy=(t, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(shift * 72 / DPI, 3),
            textcoords="offset points",
            rotation=90,
            ha="center",
            va="bottom",
            fontsize=7,
            color=_FAULT_COLOUR if any(m.fault for m in ms) else "#333333",
            annotation_clip=False,
        )
    if len(groups) > _MAX_LABELS:
        top.text(1.0, -0.02, f"{len(groups) - _MAX_LABELS} more marker labels left out", transform=top.transAxes,
                 ha="right", va="top", fontsize=7, color="#555555")


# ---------------------------------------------------------------------- figures


#: Fixed margins in pixels (no layout engine: laying out text is what a figure costs most).
_LEFT, _RIGHT, _BOTTOM, _TITLE, _LABELS, _GAP = 92, 250, 48, 30, 118, 12
#: Marker labels longer than this are cut (they stand in the space above the axes).
_LABEL_CHARS = 24


def _figure(
    width: int, heights: Sequence[float], *, labels: bool, sharex: bool = True, title: str = ""
) -> tuple[Figure, list[Axes]]:
    """A figure ``width`` pixels wide with axes of the given pixel heights stacked top
    to bottom, room above each axes for marker labels when ``labels``, and the legend
    column at the right. Shared x axes show their tick labels on the bottom axes only."""
    from matplotlib.figure import Figure as _Figure

    above = _LABELS if labels else 8
    gap = (_GAP if sharex else 40) + (0 if sharex else above)
    total = _TITLE + above + sum(heights) + gap * (len(heights) - 1) + _BOTTOM
    fig = _Figure(figsize=(width / DPI, total / DPI), dpi=DPI)
    axes: list[Axes] = []
    y = total - _TITLE - above
    for h in heights:
        y -= h
        rect = (_LEFT / width, y / total, (width - _LEFT - _RIGHT) / width, h / total)
        ax = fig.add_axes(rect, sharex=axes[0] if (sharex and axes) else None)
        axes.append(ax)
        y -= gap
    if sharex:
        for ax in axes[:-1]:
            ax.tick_params(labelbottom=False)
    if title:
        fig.text(8 / width, 1 - 8 / total, title, ha="left", va="top", fontsize=11, fontweight="bold")
    return fig, axes


def _columns(width: int) -> int:
    """Pixel columns a line is reduced to: the figure's width (the axes are narrower)."""
    return max(1, int(width))


def _line(ax: Axes, data: tuple[np.ndarray, np.ndarray] | None, width: int, scale: float = 1.0,
          x_range: tuple[float, float] | None = None, **style: Any) -> int:
    """Draw the envelope of a series as a step line (values hold until the next sample);
    returns the number of points drawn."""
    if data is None:
        return 0
    x, y = envelope(data[0], data[1], _columns(width), x_range)
    if not len(x):
        return 0
    ax.plot(x, y * scale, drawstyle="steps-post", **style)
    return len(x)


def _finish(axes: Sequence[Axes], end: float) -> None:
    axes[-1].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.yaxis.set_label_coords(-76 / ax.figure.bbox.width / ax.get_position().width, 0.5)
        if end > 0:
            ax.set_xlim(0, end)


def _x_range(series: SeriesIndex) -> tuple[float, float]:
    return (0.0, series.end) if series.end > 0 else (0.0, 1.0)


def _need_series(series: SeriesIndex) -> None:
    if not series:
        raise NotRecorded(
            "the run recorded no time series: set record.interval above zero "
            '(e.g. --set record.interval=100ms)'
        )


def paths_figure(result: RunResult, association: str | None = None, *, width: int = 1100) -> Figure:
    """cwnd, ssthresh and flight size; SRTT and RTO; path state: one colour per path of
    an SCTP association (or one TCP connection), on a shared time axis with markers."""
    series = SeriesIndex.of(result)
    _need_series(series)
    assocs = association_names(result, series)
    tcps = tcp_names(series)
    if association is None:
        if not (assocs or tcps):
            raise NotRecorded("the run has no SCTP association or TCP connection with time series")
        association = (assocs or tcps)[0]
    if association in tcps and association not in assocs:
        return _tcp_figure(result, series, association, width)
    paths = _paths_of(series, association)
    if not paths:
        known = ", ".join(assocs + tcps) or "none"
        raise KeyError(f"no SCTP association or TCP connection {association!r} with time series (known: {known})")
    marks = markers(result, association)
    title = f"SCTP association {association}: per path"
    fig, (win, rtt, state) = _figure(width, [260, 190, 90], labels=bool(marks), title=title)
    xr = _x_range(series)
    top = 0.0
    for number, entity in paths:
        colour = _COLOURS[number % len(_COLOURS)]
        label = f"path {number}"
        _line(win, series.get("sctp_path", entity, "cwnd"), width, 1e-3, xr, color=colour, lw=1.2, label=f"{label} cwnd")
        _line(win, series.get("sctp_path", entity, "flight_size"), width, 1e-3, xr, color=colour, lw=0.8, ls=":",
              label=f"{label} flight size")
        _line(win, series.get("sctp_path", entity, "ssthresh"), width, 1e-3, xr, color=colour, lw=1.0, ls="--",
              label=f"{label} ssthresh")
        for metric in ("cwnd", "flight_size"):
            data = series.get("sctp_path", entity, metric)
            if data is not None and len(data[1]):
                top = max(top, float(np.nanmax(data[1])) * 1e-3)
        _line(rtt, series.get("sctp_path", entity, "rto"), width, 1.0, xr, color=colour, lw=1.2, label=f"{label} RTO")
        _line(rtt, series.get("sctp_path", entity, "srtt"), width, 1.0, xr, color=colour, lw=1.0, ls="--",
              label=f"{label} SRTT")
        data = series.get("sctp_path", entity, "state")
        if data is not None:
            # Offset each path a little so that two paths in one state stay visible.
            _line(state, (data[0], data[1] + 0.06 * number), width, 1.0, xr, color=colour, lw=1.2, label=label)
    _window_axis(win, top)
    rtt.set_ylabel("time [s]")
    rtt.set_yscale("log")
    _legend(rtt)
    state.set_yticks([0, 1, 2], ["active", "PF", "inactive"])
    state.set_ylim(-0.4, 2.6)
    state.set_ylabel("state")
    _draw_markers([win, rtt, state], marks, xr)
    _finish([win, rtt, state], series.end)
    return fig


def _window_axis(ax: Axes, top: float) -> None:
    ax.set_ylabel("window [kB]")
    ax.set_ylim(bottom=0)
    if top > 0:
        # ssthresh starts at the peer's window (often far above cwnd): keep cwnd readable.
        ax.set_ylim(0, top * 1.25)
    _legend(ax)


def tcp_figure(result: RunResult, name: str, *, width: int = 1100) -> Figure:
    """cwnd, ssthresh and bytes in flight; SRTT and RTO of one TCP connection."""
    series = SeriesIndex.of(result)
    _need_series(series)
    if name not in tcp_names(series):
        raise KeyError(f"no TCP connection {name!r} with time series (known: {', '.join(tcp_names(series)) or 'none'})")
    return _tcp_figure(result, series, name, width)


def _tcp_figure(result: RunResult, series: SeriesIndex, name: str, width: int) -> Figure:
    marks = markers(result, name)
    fig, (win, rtt) = _figure(width, [260, 190], labels=bool(marks), title=f"TCP connection {name}")
    xr = _x_range(series)
    _line(win, series.get("tcp", name, "cwnd"), width, 1e-3, xr, color="C0", lw=1.2, label="cwnd")
    _line(win, series.get("tcp", name, "in_flight"), width, 1e-3, xr, color="C0", lw=0.8, ls=":", label="in flight")
    _line(win, series.get("tcp", name, "ssthresh"), width, 1e-3, xr, color="C0", lw=1.0, ls="--", label="ssthresh")
    top = max(
        (float(np.nanmax(d[1])) * 1e-3 for m in ("cwnd", "in_flight") if (d := series.get("tcp", name, m)) is not None
         and len(d[1]) and not np.isnan(d[1]).all()),
        default=0.0,
    )
    _window_axis(win, top)
    _line(rtt, series.get("tcp", name, "rto"), width, 1.0, xr, color="C0", lw=1.2, label="RTO")
    _line(rtt, series.get("tcp", name, "srtt"), width, 1.0, xr, color="C0", lw=1.0, ls="--", label="SRTT")
    rtt.set_ylabel("time [s]")
    rtt.set_yscale("log")
    _legend(rtt)
    _draw_markers([win, rtt], marks, xr)
    _finish([win, rtt], series.end)
    return fig


def _most(names: list[str], key: Any, limit: int | None) -> tuple[list[str], int]:
    """The ``limit`` names with the largest ``key`` (all when ``limit`` is None), in their
    original order, and how many were left out."""
    if limit is None or len(names) <= limit:
        return names, 0
    keep = set(sorted(names, key=lambda n: (-key(n), names.index(n)))[:limit])
    return [n for n in names if n in keep], len(names) - limit


def flows_figure(result: RunResult, *, width: int = 1100, limit: int | None = 12) -> Figure:
    """Goodput over time of every flow: what the receiving application got per sampling
    interval, in Mbit/s. With more than ``limit`` flows, the ``limit`` that received most."""
    series = SeriesIndex.of(result)
    _need_series(series)
    flows = [f for f in series.entities.get("flow", []) if series.get("flow", f, "rx_rate") is not None]
    if not flows:
        raise NotRecorded("the run has no flow with time series")
    flows, left_out = _most(flows, lambda f: _nan0(result.scalar_or_nan("flow", f, "rx_bytes")), limit)
    marks = markers(result)
    title = "Goodput per flow (application bytes received per sampling interval)"
    if left_out:
        title += f": the {len(flows)} that received most, {left_out} more not drawn"
    fig, (ax,) = _figure(width, [300], labels=bool(marks), title=title)
    xr = _x_range(series)
    for i, flow in enumerate(flows):
        _line(ax, series.get("flow", flow, "rx_rate"), width, 1e-6, xr, color=_COLOURS[i % len(_COLOURS)], lw=1.1,
              label=flow)
    ax.set_ylabel("goodput [Mbit/s]")
    ax.set_ylim(bottom=0)
    _legend(ax)
    _draw_markers([ax], marks, xr)
    _finish([ax], series.end)
    return fig


def queued_interfaces(result: RunResult) -> list[str]:
    """Interfaces that queued packets or dropped some, in the core's order."""
    table = result.scalar_table
    ifaces = list(dict.fromkeys(table.loc[table["kind"] == "iface", "entity"]))
    return [
        i
        for i in ifaces
        if result.scalar_or_nan("iface", i, "queue_max_packets") > 0 or result.scalar_or_nan("iface", i, "drops") > 0
    ]


def _drop_note(result: RunResult, iface: str) -> str:
    """`` (117 drops: link_down 117)`` for an interface that dropped, else ``""``."""
    total = result.scalar_or_nan("iface", iface, "drops")
    if not total > 0:
        return ""
    table = result.scalar_table
    rows = table[(table["kind"] == "iface") & (table["entity"] == iface) & table["metric"].str.startswith("drops_")]
    reasons = ", ".join(
        f"{m.removeprefix('drops_')} {int(v):,}" for m, v in zip(rows["metric"], rows["value"], strict=True) if v > 0
    )
    return f" ({int(total):,} drops: {reasons})" if reasons else f" ({int(total):,} drops)"


def _nan0(x: float) -> float:
    return 0.0 if x != x else x


def queues_figure(result: RunResult, *, width: int = 1100, limit: int | None = 12) -> Figure:
    """Queue occupancy in packets of every interface that queued or dropped; below it the
    cumulative drops per interface when ``drop`` events were logged (else the totals are
    in the legend). With more than ``limit`` such interfaces, those with the most drops,
    then the longest queues."""
    series = SeriesIndex.of(result)
    _need_series(series)
    ifaces = queued_interfaces(result)
    if not ifaces:
        raise NotRecorded("no interface queued or dropped a packet")
    ifaces, left_out = _most(
        ifaces,
        lambda i: _nan0(result.scalar_or_nan("iface", i, "drops")) * 1e9
        + _nan0(result.scalar_or_nan("iface", i, "queue_max_packets")),
        limit,
    )
    events = result.events
    drops = events[events["kind"] == "drop"] if len(events) else events
    drop_times = {i: drops.loc[drops["entity"] == i, "time_s"].to_numpy() for i in ifaces} if len(drops) else {}
    with_drops = [i for i in ifaces if len(drop_times.get(i, ()))]
    heights = [280, 160] if with_drops else [280]
    marks = markers(result)
    title = "Queues of the interfaces that queued or dropped"
    if left_out:
        title += f": {len(ifaces)} with the most drops and longest queues, {left_out} more not drawn"
    fig, axes = _figure(width, heights, labels=bool(marks), title=title)
    ax = axes[0]
    xr = _x_range(series)
    for n, iface in enumerate(ifaces):
        colour = _COLOURS[n % len(_COLOURS)]
        label = iface + _drop_note(result, iface)
        _line(ax, series.get("iface", iface, "queue_packets"), width, 1.0, xr, color=colour, lw=1.0, label=label)
        if iface in with_drops:
            t = np.sort(drop_times[iface])
            axes[1].plot(*envelope(t, np.arange(1, len(t) + 1, dtype=np.float64), _columns(width), xr),
                         drawstyle="steps-post", color=colour, lw=1.1, label=iface)
    ax.set_ylabel("queue [packets]")
    ax.set_ylim(bottom=0)
    _legend(ax)
    if with_drops:
        axes[1].set_ylabel("drops (cumulative)")
        axes[1].set_ylim(bottom=0)
        _legend(axes[1])
    _draw_markers(axes, marks, xr)
    _finish(axes, series.end)
    return fig


def _broken(x: np.ndarray, y: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` with a NaN wherever x jumps by more than ``gap``: a line through the
    points then shows pauses in sending as pauses (and costs one path, not a marker per
    point)."""
    if len(x) < 2:
        return x, y
    cut = np.flatnonzero(np.diff(x) > gap) + 1
    return np.insert(x, cut, np.nan), np.insert(y, cut, np.nan)


def _unwrap(tsn: np.ndarray, base: int) -> np.ndarray:
    """32-bit serial numbers as signed offsets from ``base`` (RFC 1982)."""
    d = (tsn.astype(np.int64) - base) % (1 << 32)
    return np.where(d >= 1 << 31, d - (1 << 32), d)


def sequence_figure(result: RunResult, association: str | None = None, *, width: int = 1100) -> Figure:
    """Time-sequence graph of an SCTP association (as Wireshark's tcptrace graph): each
    DATA chunk's TSN against the time it was sent, one colour per path, retransmissions
    as crosses; the SACKs' cumulative TSN ack as a black step line and the highest TSN
    they report (gap ack blocks) in grey. When the run has a fault (else a
    retransmission), a second panel shows the five seconds around the first one."""
    packets = result.packets
    if packets is None:
        raise NotRecorded("the run kept no packet log: set record.packets = true (e.g. --set record.packets=true)")
    names = list(packets["association"].cat.categories)
    if not names:
        raise NotRecorded("the packet log is empty: no SCTP association sent DATA")
    if association is None:
        association = names[0]
    if association not in names:
        raise KeyError(f"no association {association!r} in the packet log (known: {', '.join(names)})")
    sel = packets["association"].cat.codes.to_numpy() == names.index(association)
    log = _Log(
        t=packets["time_s"].to_numpy()[sel],
        kind=packets["kind"].cat.codes.to_numpy()[sel],
        tsn=packets["tsn"].to_numpy()[sel],
        high=packets["highest_tsn"].to_numpy()[sel],
        path=packets["path"].to_numpy()[sel],
        rtx=packets["retransmission"].to_numpy()[sel],
    )
    if not log.is_data.any():
        raise NotRecorded(f"association {association} sent no DATA")
    end = max(float(log.t.max()), result.scalar_or_nan("run", "run", "sim_time") or 0.0)
    xr = (0.0, end if end > 0 else 1.0)
    marks = markers(result, association)
    faults = [m.time_s for m in marks if m.fault]
    retransmitted = log.t[log.is_data & log.rtx]
    focus = faults[0] if faults else (float(retransmitted[0]) if len(retransmitted) else None)
    zoom = None if focus is None else (max(0.0, focus - 1.0), min(xr[1], focus + 4.0))
    if zoom is not None and (zoom[1] - zoom[0]) > 0.5 * xr[1]:
        zoom = None  # a short run: the whole graph already shows it
    title = f"Time-sequence graph of SCTP association {association}"
    fig, axes = _figure(width, [400, 300] if zoom else [400], labels=bool(marks), sharex=False, title=title)
    log.draw(axes[0], xr, _columns(width), legend=True)
    _draw_markers([axes[0]], marks, xr)
    if zoom:
        log.draw(axes[1], zoom, _columns(width), legend=False)
        axes[1].set_xlim(*zoom)
        axes[1].set_title(f"{zoom[0]:g} s to {zoom[1]:g} s", fontsize=9, loc="left")
        inside = [m for m in marks if zoom[0] <= m.time_s <= zoom[1]]
        _draw_markers([axes[1]], inside, zoom)
        axes[0].axvspan(*zoom, color="#000000", alpha=0.06, lw=0)
    axes[0].set_xlim(*xr)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("time [s]")
    for ax in axes:
        ax.yaxis.set_label_coords(-76 / width / ax.get_position().width, 0.5)
    return fig


@dataclass
class _Log:
    """One association's rows of the packet log."""

    t: np.ndarray
    kind: np.ndarray
    tsn: np.ndarray
    high: np.ndarray
    path: np.ndarray
    rtx: np.ndarray

    def __post_init__(self) -> None:
        self.is_data = self.kind == 0
        self.is_sack = self.kind == 1
        self.base = int(self.tsn[self.is_data][0]) if self.is_data.any() else 0
        self.rel = _unwrap(self.tsn, self.base).astype(np.float64)
        self.rel_high = _unwrap(self.high, self.base).astype(np.float64)

    def draw(self, ax: Axes, xr: tuple[float, float], columns: int, *, legend: bool) -> None:
        """Rows inside ``xr`` as the envelope over ``columns``."""
        inside = (self.t >= xr[0]) & (self.t <= xr[1])
        t, rel = self.t, self.rel
        for p in sorted(set(self.path[self.is_data].tolist())):
            colour = _COLOURS[p % len(_COLOURS)] if p >= 0 else "#777777"
            name = f"path {p}" if p >= 0 else "unknown path"
            new = inside & self.is_data & (self.path == p) & ~self.rtx
            again = inside & self.is_data & (self.path == p) & self.rtx
            if new.any():
                x, y = _broken(*envelope(t[new], rel[new], columns, xr), 3 * (xr[1] - xr[0]) / columns)
                ax.plot(x, y, lw=2.0, color=colour, solid_capstyle="butt", label=f"{name}: DATA")
            if again.any():
                ax.plot(*envelope(t[again], rel[again], columns, xr), ls="none", marker="x", ms=5, mew=1.2,
                        color=colour, label=f"{name}: retransmission")
        sack = inside & self.is_sack
        if sack.any():
            if (sack & (self.rel_high > rel)).any():
                ax.plot(*envelope(t[sack], self.rel_high[sack], columns, xr), drawstyle="steps-post",
                        color="#999999", lw=0.8, label="highest TSN SACKed (gap blocks)")
            ax.plot(*envelope(t[sack], rel[sack], columns, xr), drawstyle="steps-post", color="black", lw=1.0,
                    label="cumulative TSN ack (SACK)")
        ax.set_ylabel(f"TSN − first ({self.base})")
        if legend:
            _legend(ax, markerscale=2)
