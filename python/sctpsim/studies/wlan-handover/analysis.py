"""Paper 001: Tables 4.1-4.20 (paper beside ours with 95% CIs), the set-up of Tables 3.1 and
3.2, and figures like the paper's Figs. 4.1-4.16, from the study's two sweeps.

Called by ``sctpsim reproduce wlan-handover`` with a
:class:`sctpsim.reproduce.StudyContext`; returns the tables and figures in report order.

A cell is (scenario, number of background hosts, rate or speed). The number of hosts of a
run is the number of background hosts present (``nodes[i].present``; the sweeps leave the
others out). Per cell, over the replications:

* MC throughput: the goodput of the MC's upload (``flow/mc/goodput``), Mbit/s.
* Background host throughput: per run, the mean goodput of the cell's n hosts; averaged
  over the runs (host 1 alone goes in the note).
* Handover delay: per run, the mean over its handovers (set-primary request to the first
  DATA from the new address); runs without a handover add nothing (their count is noted).
* End-to-end delay: the mean delay of the MC's messages, ms.
* Loss probability: the MC's packets dropped anywhere over its packets sent.

The paper's standard deviations stand beside the standard deviation of our per-run values
(no interval).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from sctpsim.reproduce import Comparison, Estimate, Figure, Matrix, StudyContext, Table, compare

HOSTS = (5, 10, 15, 20, 25, 30)
RATES = (54, 36, 24)
SPEEDS = (4.5, 6.5, 15.5)
RATE_KEY = "nodes[3].interfaces[0].wlan.rate"
SPEED_KEY = "nodes[5].mobility.speed"
#: The background hosts are nodes[6] (H1) .. nodes[35] (H30); the scenario files have H1..H10
#: present.
FIRST_HOST_NODE = 6
PRESENT_IN_FILE = 10
SWEEPS = {"A": "tcp-background", "B": "sctp-background"}

#: Per quantity: our per-run column (computed in :func:`_cells`) and the scale to the
#: paper's unit.
QUANTITIES = {
    "MC throughput": ("mc_thr", 1e-6),
    "background host throughput": ("host_thr", 1e-6),
    "handover delay": ("ho_delay", 1e3),
    "end-to-end delay": ("e2e", 1e3),
    "loss probability": ("loss", 1.0),
}

#: The paper's tables: (source, scenario, quantities, the column that varies across tables).
TABLES = [
    ("Table 4.1", "A", ("MC throughput",), 54),
    ("Table 4.2", "A", ("MC throughput",), 36),
    ("Table 4.3", "A", ("MC throughput",), 24),
    ("Table 4.4", "A", ("background host throughput",), 54),
    ("Table 4.5", "A", ("background host throughput",), 36),
    ("Table 4.6", "A", ("background host throughput",), 24),
    ("Table 4.7", "A", ("handover delay", "end-to-end delay"), 54),
    ("Table 4.8", "A", ("handover delay", "end-to-end delay"), 36),
    ("Table 4.9", "A", ("handover delay", "end-to-end delay"), 24),
    ("Table 4.10", "A", ("loss probability",), None),
    ("Table 4.11", "B", ("MC throughput",), 4.5),
    ("Table 4.12", "B", ("MC throughput",), 6.5),
    ("Table 4.13", "B", ("MC throughput",), 15.5),
    ("Table 4.14", "B", ("background host throughput",), 4.5),
    ("Table 4.15", "B", ("background host throughput",), 6.5),
    ("Table 4.16", "B", ("background host throughput",), 15.5),
    ("Table 4.17", "B", ("handover delay", "end-to-end delay"), 4.5),
    ("Table 4.18", "B", ("handover delay", "end-to-end delay"), 6.5),
    ("Table 4.19", "B", ("handover delay", "end-to-end delay"), 15.5),
    ("Table 4.20", "B", ("loss probability",), None),
]


def analyse(ctx: StudyContext) -> list[Any]:
    cells = {scn: _cells(ctx, sweep) for scn, sweep in SWEEPS.items()}
    out: list[Any] = []
    for source, scn, quantities, value in TABLES:
        out.append(_table(ctx, cells[scn], source, scn, quantities, value))
    out.append(_handover_table(cells))
    out.append(_setup(ctx))
    for scn in SWEEPS:
        out.append(_figure(ctx, cells[scn], scn))
    return out


# ------------------------------------------------------------------ runs -> cells


def _num(text: Any) -> float:
    """54 -> 54.0, "4.5km/h" -> 4.5."""
    if isinstance(text, int | float):
        return float(text)
    return float(str(text).removesuffix("km/h"))


def _cells(ctx: StudyContext, sweep: str) -> pd.DataFrame:
    """One row per successful run: hosts, rate, speed and the per-run quantities."""
    runs = ctx.runs(sweep)
    if runs.empty:
        return pd.DataFrame(columns=["hosts", "rate", "speed", *[q for q, _ in QUANTITIES.values()]])
    hosts = pd.Series(0, index=runs.index)
    for k in range(30):
        key = f"nodes[{FIRST_HOST_NODE + k}].present"
        if key in runs:
            hosts += runs[key].map(lambda v: str(v).lower() == "true").astype(int)
        else:
            hosts += int(k < PRESENT_IN_FILE)
    rate = runs[RATE_KEY].map(_num) if RATE_KEY in runs else pd.Series(54.0, index=runs.index)
    speed = runs[SPEED_KEY].map(_num) if SPEED_KEY in runs else pd.Series(4.5, index=runs.index)

    def col(metric: str) -> pd.Series:
        return runs[metric].astype(float) if metric in runs else pd.Series(math.nan, index=runs.index)

    host_goodput = np.stack([col(f"flow/h{k + 1}/goodput").to_numpy() for k in range(30)], axis=1)
    n = hosts.to_numpy()
    mask = np.arange(30)[None, :] < n[:, None]
    with np.errstate(invalid="ignore"):
        per_run_hosts = np.where(mask, np.nan_to_num(host_goodput), 0.0).sum(axis=1) / n
    frame = pd.DataFrame(
        {
            "hosts": n,
            "rate": rate.to_numpy(),
            "speed": speed.to_numpy(),
            "replication": runs["replication"].to_numpy(),
            "mc_thr": col("flow/mc/goodput").to_numpy(),
            "host_thr": per_run_hosts,
            "host1_thr": host_goodput[:, 0],
            "ho_delay": col("sctp/mc/handover_delay_mean").to_numpy(),
            "handovers": col("sctp/mc/handovers").fillna(0.0).to_numpy(),
            "asconf_rtt": col("sctp/mc/asconf_rtt_mean").to_numpy(),
            "l2": col("sctp/mc/l2_handover_time_mean").to_numpy(),
            "closed": col("sctp/mc/closed").to_numpy(),
            "e2e": col("flow/mc/delay_mean").to_numpy(),
            "loss": col("flow/mc/loss_rate").to_numpy(),
        }
    )
    return frame


def _select(cells: pd.DataFrame, scn: str, hosts: int, value: float) -> pd.DataFrame:
    key = "rate" if scn == "A" else "speed"
    return cells[(cells["hosts"] == hosts) & np.isclose(cells[key], value)]


def _estimate(values: np.ndarray, scale: float, statistic: str) -> Estimate | None:
    from sctpsim.stats import confidence_interval

    mean, stdev, low, high, n = confidence_interval(np.asarray(values, dtype=np.float64) * scale)
    if n == 0:
        return None
    if statistic == "stdev":
        return None if math.isnan(stdev) else Estimate(stdev, math.nan, math.nan, n)
    return Estimate(mean, low, high, n, stdev)


def _fmt(x: float, digits: int = 2) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


# ------------------------------------------------------------------ tables


def _table(
    ctx: StudyContext,
    cells: pd.DataFrame,
    source: str,
    scn: str,
    quantities: tuple[str, ...],
    value: float | None,
) -> Comparison:
    ref = ctx.ref(source=source).copy()
    ref["hosts"] = ref["hosts"].astype(float).astype(int)
    across = "rate [Mbit/s]" if scn == "A" else "speed [km/h]"
    ref[across] = ref["rate_mbps" if scn == "A" else "speed_kmh"].astype(float)
    ref["metric"] = ref["quantity"]
    order = {q: i for i, q in enumerate(quantities)}
    ref["_o"] = [
        (order.get(q, 9), h, -v if scn == "A" else v, s != "mean")
        for q, h, v, s in zip(ref["quantity"], ref["hosts"], ref[across], ref["statistic"], strict=True)
    ]
    ref = ref.sort_values("_o", kind="stable").drop(columns="_o")

    def ours(r: pd.Series) -> Estimate | None:
        column, scale = QUANTITIES[r["quantity"]]
        sel = _select(cells, scn, int(r["hosts"]), float(r[across]))
        return _estimate(sel[column].to_numpy(), scale, r["statistic"])

    def note(r: pd.Series) -> str:
        sel = _select(cells, scn, int(r["hosts"]), float(r[across]))
        parts = [str(r.get("note", "") or "")]
        if r["quantity"] == "handover delay" and r["statistic"] == "mean":
            with_ho = int((sel["handovers"] > 0).sum())
            parts.append(f"{with_ho} of {len(sel)} runs handed over")
        if r["quantity"] == "background host throughput" and r["statistic"] == "mean":
            h1 = sel["host1_thr"].to_numpy(dtype=float) * 1e-6
            if np.isfinite(h1).any():
                parts.append(f"host 1 alone {_fmt(float(np.nanmean(h1)), 3)} Mbit/s")
        if sel.empty:
            parts.append("no run of ours in this cell")
        return "; ".join(p for p in parts if p)

    labels = ["hosts", "metric", "statistic"] if len(quantities) > 1 else ["hosts", "statistic"]
    if value is None:
        labels = ["hosts", across]
    frame = compare(ref, labels, ours, note=note)
    if value is None:
        matrix = Matrix(("hosts",), (across,), grid=("hosts", across))
    elif len(quantities) > 1:
        matrix = Matrix(("hosts",), ("metric", "statistic"))
    else:
        matrix = Matrix(("hosts",), ("statistic",))
    what = ", ".join(quantities)
    cond = "" if value is None else (f" at {value:g} Mbit/s" if scn == "A" else f" at {value:g} km/h")
    background = "TCP" if scn == "A" else "SCTP"
    title = f"{source} (scenario {scn}): {what}{cond} against the number of {background} background hosts"
    return Comparison(source.lower().replace(" ", "").replace(".", "_"), title, frame, labels, _text(source, cells, scn), matrix)


def _text(source: str, cells: pd.DataFrame, scn: str) -> str:
    """The discussion under a table, from the results."""
    if cells.empty:
        return "No runs of ours for this table."
    n = len(cells)
    with_ho = int((cells["handovers"] > 0).sum())
    closed = int((cells["closed"].fillna(0) > 0).sum())
    return (
        f"Scenario {scn}, {n} runs in all: {with_ho} handed over at least once "
        f"({_fmt(100 * with_ho / n, 0)} %), and in {closed} the MC's association closed. "
        "See the README (\"Differences\") for why our numbers differ from the paper's."
    )


def _handover_table(cells: dict[str, pd.DataFrame]) -> Table:
    """Per cell: handovers, handover delay beside the ASCONF round trip and the layer-2
    handover time (our decomposition; the paper reports the delay only)."""
    rows = []
    for scn, frame in cells.items():
        key = "rate" if scn == "A" else "speed"
        values = RATES if scn == "A" else SPEEDS
        for v in values:
            for h in HOSTS:
                sel = _select(frame, scn, h, v)
                if sel.empty:
                    continue
                ho = sel["handovers"].to_numpy(dtype=float)
                rows.append(
                    {
                        "scenario": scn,
                        key: v,
                        "hosts": h,
                        "runs": len(sel),
                        "handovers per run": float(np.mean(ho)),
                        "handover delay [ms]": _nanmean(sel["ho_delay"]) * 1e3,
                        "ASCONF round trip [ms]": _nanmean(sel["asconf_rtt"]) * 1e3,
                        "L2 handover time [ms]": _nanmean(sel["l2"]) * 1e3,
                        "associations closed": int((sel["closed"].fillna(0) > 0).sum()),
                    }
                )
    frame = pd.DataFrame(rows)
    text = (
        "Beside the handover delay (set-primary request to the first DATA sent from the new "
        "address), the round trip of the ASCONF carrying the SET-PRIMARY and the layer-2 "
        "handover time of the new interface (from the start of the scan that found its AP, or "
        "the loss of its previous AP if later, to its association). Means over the runs with a "
        "handover; a run's value is the mean over its handovers."
    )
    return Table("handover-decomposition", "Handover: delay, ASCONF round trip and layer-2 time per cell", frame, text)


def _nanmean(s: pd.Series) -> float:
    x = s.to_numpy(dtype=float)
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else math.nan


#: Our value of each set-up number of Tables 3.1 and 3.2 and sections 3.3.2, 3.5 and 4,
#: where we have one (see the scenarios and the README's assumptions).
OUR_SETUP = {
    "simulation time": 210,
    "replications": 50,
    "area width": 600,
    "area height": 400,
    "multihomed nodes": 1,
    "streams": 2,
    "SCTP request size": 1456,
    "MTU": 1500,
    "heartbeat interval": 10,
    "RTO": 3,
    "initial SCTP arwnd": 65536,
    "initial SCTP ssthresh": 65536,
    "propagation delay": 1,
    "carrier frequency": 2.4,
    "wired data rate": 100,
    "transmitter power": 2.0,
    "queue limit": 50,
    "MC upload size": 100,
    "background host upload size": 100,
    "AP1 channel": 1,
    "AP2 channel": 6,
    "sensitivity threshold": -90,
    "active scanning threshold": -80,
    "beacon interval": 100,
    "transmission time": 200,
}

SETUP_NOTES = {
    "initial SCTP cwnd": "ours: RFC 4960's min(4 MTU, max(2 MTU, 4380 bytes)) (assumption 14)",
    "SCTP header size": "matches no header we know; ignored (assumption 15)",
    "TCP header size": "matches no header we know; ignored (assumption 15)",
    "max RTT": "matches no INET or RFC parameter; ignored (assumption 14)",
    "RTO": "read as RTO.Initial (RFC 4960 preset: RTO.Min 1 s, RTO.Max 60 s)",
}


def _setup(ctx: StudyContext) -> Comparison:
    ref = ctx.ref(statistic="setting")

    def ours(r: pd.Series) -> Estimate | None:
        q = r["quantity"]
        if q in ("background hosts", "Wi-Fi data rate", "MC speed"):
            return Estimate(float(r["value"]))  # swept: every value of the paper is a cell
        if q == "transmitter power" and r["unit"] == "dBm":
            return Estimate(10 * math.log10(2.0))
        v = OUR_SETUP.get(q)
        return None if v is None else Estimate(float(v))

    def note(r: pd.Series) -> str:
        text = SETUP_NOTES.get(r["quantity"]) or str(r.get("note", "") or "")
        return text or ("" if ours(r) is not None else "not modelled")

    frame = compare(ref, ["source"], ours, note=note)
    return Comparison(
        "setup",
        "Set-up: Tables 3.1 and 3.2, sections 3.3.2, 3.5 and Chapter 4",
        frame,
        ["source"],
        "The paper's settings beside ours; the README gives every reading.",
    )


# ------------------------------------------------------------------ figures


def _figure(ctx: StudyContext, cells: pd.DataFrame, scn: str) -> Figure:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    key = "rate" if scn == "A" else "speed"
    values = RATES if scn == "A" else SPEEDS
    unit = "Mbit/s" if scn == "A" else "km/h"
    ref = ctx.ref(scenario=scn, statistic="mean")
    ref = ref[ref["source"].str.startswith("Table 4")]
    panels = [
        ("MC throughput", "MC throughput [Mbit/s]"),
        ("background host throughput", "background host throughput [Mbit/s]"),
        ("handover delay", "handover delay [ms]"),
        ("end-to-end delay", "MC end-to-end delay [ms]"),
        ("loss probability", "MC loss probability"),
    ]
    first, last = ("4.1", "4.8") if scn == "A" else ("4.9", "4.16")
    fig_id = f"fig-scenario-{scn.lower()}"
    with matplotlib.rc_context({"svg.hashsalt": "sctpsim", "figure.dpi": 100}):
        fig, axes = plt.subplots(1, 5, figsize=(22, 4.5))
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for ax, (quantity, ylabel) in zip(axes, panels, strict=True):
            column, scale = QUANTITIES[quantity]
            tops: list[float] = []
            for i, v in enumerate(values):
                color = colors[i % len(colors)]
                xs, mean, lo, hi = [], [], [], []
                for h in HOSTS:
                    est = _estimate(_select(cells, scn, h, v)[column].to_numpy(), scale, "mean")
                    if est is None:
                        continue
                    xs.append(h)
                    mean.append(est.mean)
                    lo.append(0.0 if math.isnan(est.low) else est.mean - est.low)
                    hi.append(0.0 if math.isnan(est.high) else est.high - est.mean)
                ax.errorbar(xs, mean, yerr=[lo, hi], color=color, marker="o", capsize=3, label=f"ours, {v:g} {unit}")
                col = "rate_mbps" if scn == "A" else "speed_kmh"
                p = ref[(ref["quantity"] == quantity) & np.isclose(ref[col].astype(float), v)]
                p = p.assign(h=p["hosts"].astype(float)).sort_values("h")
                ax.plot(p["h"], p["value"].astype(float), color=color, linestyle="--", marker="^", mfc="none")
                tops.extend([*mean, *p["value"].astype(float)])
            # The means and the paper's values set the scale (intervals of few replications
            # may reach beyond it).
            top = max((t for t in tops if math.isfinite(t)), default=0.0)
            if top > 0:
                ax.set_ylim(0, 1.3 * top)
            ax.set_xlabel("background hosts")
            ax.set_ylabel(ylabel)
            ax.set_xticks(list(HOSTS))
            ax.grid(True, alpha=0.3)
        axes[0].plot([], [], color="black", linestyle="--", marker="^", mfc="none", label="paper")
        axes[0].legend(fontsize=8)
        fig.suptitle(
            f"Scenario {scn}: {'TCP' if scn == 'A' else 'SCTP'} background hosts, by {key} (paper Figs. {first}-{last})"
        )
        fig.tight_layout()
        png, svg = ctx.save_figure(fig, fig_id)
        plt.close(fig)
    reps = int(cells.groupby(["hosts", key]).size().max()) if len(cells) else 0
    caption = (
        f"Solid: our mean over up to {reps} replications per cell with 95% confidence intervals; "
        "dashed with hollow triangles: the paper's means (Tables "
        + ("4.1-4.10" if scn == "A" else "4.11-4.20")
        + "). The handover delay averages the runs that handed over."
    )
    return Figure(fig_id, f"Scenario {scn} against the number of background hosts", png, svg, caption)
