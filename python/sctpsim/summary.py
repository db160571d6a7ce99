"""Human-readable summary of a run, printed as ``rich`` tables.

The summary is built from the scalars only (no time series), so it is cheap even for
long runs. It is meant for people: numbers are rounded and given human units; the
exact values are in ``scalars.csv``.

TCP senders, flow groups (with Jain's fairness index), SCTP associations (goodput,
retransmissions, failover and switch-back times) and SCTP paths get tables of their own when
the run has them. Tables for entities that do not exist in the run are skipped, and the node table is
shown only when some node dropped packets (drops at nodes — no route, TTL expired —
usually mean a misconfigured scenario, so they deserve to stand out).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from functools import partial
from typing import IO, TYPE_CHECKING, Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    import pandas as pd

    from sctpsim.results import RunResult

__all__ = [
    "format_count",
    "format_ms",
    "format_path_state",
    "format_percent",
    "format_rate",
    "format_sig",
    "print_summary",
    "print_table",
    "summary_console",
    "summary_tables",
    "sweep_tables",
]

#: Width used when the output is not a terminal (CI logs, files): wide enough for
#: the interface table without wrapping, narrow enough for a log viewer.
NON_TTY_WIDTH = 120

_MISSING = "-"
_DROPS_PREFIX = "drops_"


class _Console(Console):
    """A Console that leaves a closed pipe (``sctpsim run ... | head -1``) to the command,
    which ends quietly; rich itself would exit with status 1."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def summary_console(file: IO[str] | None = None) -> Console:
    """A Console suited to the summary: fixed width and no colour codes off a terminal.

    A terminal keeps its own width and colours; anything else (a pipe, a CI log)
    gets :data:`NON_TTY_WIDTH` columns, unless ``COLUMNS`` says otherwise (rich
    honours it), and no ANSI escapes.
    """
    console = _Console(file=file, highlight=False)
    if not console.is_terminal:
        width = NON_TTY_WIDTH
        if os.environ.get("COLUMNS", "").isdigit():
            width = int(os.environ["COLUMNS"])
        console = _Console(
            file=file,
            highlight=False,
            width=width,
            color_system=None,
            soft_wrap=False,
        )
    return console


# ------------------------------------------------------------------ formatting


def _bad(x: float) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def format_count(x: float) -> str:
    """An integer count with thousands separators (``"12,345"``)."""
    if _bad(x):
        return _MISSING
    return f"{round(x):,}"


def format_rate(bits_per_s: float) -> str:
    """A bit rate with three significant digits and an SI prefix (``"9.98 Mbit/s"``)."""
    if _bad(bits_per_s):
        return _MISSING
    value = float(bits_per_s)
    for prefix in ("", "k", "M", "G", "T"):
        # Switch prefix before rounding would print "1000 kbit/s".
        if abs(value) < 999.5 or prefix == "T":
            break
        value /= 1000.0
    if value == 0:
        return "0 bit/s"
    # Decimals for three significant digits, decided after rounding so 0.9999
    # prints as "1.00", not "1.000".
    rounded = float(f"{value:.3g}")
    digits = max(0, 2 - math.floor(math.log10(abs(rounded))))
    return f"{value:.{digits}f} {prefix}bit/s"


def format_percent(fraction: float, digits: int = 2) -> str:
    """A fraction as a percentage (``0.0123`` -> ``"1.23 %"``)."""
    if _bad(fraction):
        return _MISSING
    return f"{fraction * 100:.{digits}f} %"


def format_ms(seconds: float) -> str:
    """Seconds as milliseconds with three decimals (microsecond resolution)."""
    if _bad(seconds):
        return _MISSING
    return f"{seconds * 1e3:.3f}"


def format_float(x: float, digits: int = 1) -> str:
    """A plain float with fixed decimals, or ``-`` for NaN."""
    if _bad(x):
        return _MISSING
    return f"{x:.{digits}f}"


# ---------------------------------------------------------------------- tables


def _entities(result: RunResult, kind: str) -> list[str]:
    """Entities of ``kind``, in the order the core reported them."""
    return result.entities(kind)


def _drop_reasons(result: RunResult, kind: str, entity: str) -> str:
    """``"queue_full=12, link_down=3"`` for the non-zero ``drops_<reason>`` scalars."""
    parts = []
    for metric, value in result.entity_scalars(kind, entity):
        if metric.startswith(_DROPS_PREFIX) and not _bad(value) and value > 0:
            # No thousands separators here: commas already separate the reasons.
            parts.append(f"{metric[len(_DROPS_PREFIX) :]}={round(value)}")
    return ", ".join(parts)


_Justify = Literal["left", "right"]


def _table(title: str, columns: Iterable[tuple[str, _Justify]]) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold")
    for header, justify in columns:
        table.add_column(header, justify=justify, no_wrap=True)
    return table


def _flows_table(result: RunResult) -> Table | None:
    flows = _entities(result, "flow")
    if not flows:
        return None
    table = _table(
        "Flows",
        [
            ("flow", "left"),
            ("sent pkts", "right"),
            ("received pkts", "right"),
            ("loss", "right"),
            ("goodput", "right"),
            ("delay mean ms", "right"),
            ("p95 ms", "right"),
            ("max ms", "right"),
        ],
    )
    for flow in flows:
        s = partial(result.scalar_or_nan, "flow", flow)
        table.add_row(
            flow,
            format_count(s("tx_packets")),
            format_count(s("rx_packets")),
            format_percent(s("loss_rate")),
            format_rate(s("goodput")),
            format_ms(s("delay_mean")),
            format_ms(s("delay_p95")),
            format_ms(s("delay_max")),
        )
    return table


def _tcp_table(result: RunResult) -> Table | None:
    # Senders only: a sink's connections report just their ECN counters under "tcp".
    conns = [c for c in _entities(result, "tcp") if not _bad(result.scalar_or_nan("tcp", c, "segments_sent"))]
    if not conns:
        return None
    table = _table(
        "TCP senders",
        [
            ("flow", "left"),
            ("segments", "right"),
            ("retransmitted", "right"),
            ("fast rtx", "right"),
            ("timeouts", "right"),
            ("srtt ms", "right"),
            ("cwnd bytes", "right"),
            ("completed s", "right"),
        ],
    )
    for conn in conns:
        s = partial(result.scalar_or_nan, "tcp", conn)
        table.add_row(
            conn,
            format_count(s("segments_sent")),
            format_count(s("retransmissions")),
            format_count(s("fast_retransmits")),
            format_count(s("timeouts")),
            format_ms(s("srtt")),
            format_count(s("cwnd")),
            format_float(s("completion_time"), digits=3),
        )
    return table


_PATH_STATES = {0: "active", 1: "PF", 2: "inactive"}


def format_path_state(code: float) -> str:
    """The ``state`` code of an SCTP path (0, 1, 2) as ``active``, ``PF`` or ``inactive``."""
    if _bad(code):
        return _MISSING
    return _PATH_STATES.get(round(code), _MISSING)


def _sctp_apps(result: RunResult, metric: str) -> list[str]:
    """SCTP applications that reported ``metric``, in the order the core reported them."""
    return [a for a in _entities(result, "sctp") if not _bad(result.scalar_or_nan("sctp", a, metric))]


def _sctp_receivers_table(result: RunResult) -> Table | None:
    apps = _sctp_apps(result, "delivered_bytes")
    if not apps:
        return None
    table = _table(
        "SCTP receivers (delay: end to end, ms)",
        [
            ("app", "left"),
            ("bytes", "right"),
            ("messages", "right"),
            ("goodput", "right"),
            ("mean", "right"),
            ("p95", "right"),
            ("max", "right"),
        ],
    )
    for app in apps:
        s = partial(result.scalar_or_nan, "sctp", app)
        table.add_row(
            app,
            format_count(s("delivered_bytes")),
            format_count(s("delivered_messages")),
            format_rate(s("goodput")),
            format_ms(s("delay_mean")),
            format_ms(s("delay_p95")),
            format_ms(s("delay_max")),
        )
    return table


def _sctp_senders_table(result: RunResult) -> Table | None:
    apps = _sctp_apps(result, "sent_bytes")
    if not apps:
        return None
    table = _table(
        "SCTP senders (retransmitted chunks)",
        [
            ("app", "left"),
            ("sent bytes", "right"),
            ("fast rtx", "right"),
            ("T3 rtx", "right"),
            ("T3 timeouts", "right"),
            ("heartbeats", "right"),
        ],
    )
    # A real sender (sctpsim real send) reports its own goodput: bytes acknowledged over
    # the time from the first send to the end of the association.
    goodput = any(not _bad(result.scalar_or_nan("sctp", a, "acked_bytes")) for a in apps)
    if goodput:
        table.add_column("goodput", justify="right", no_wrap=True)
        table.add_column("completion s", justify="right", no_wrap=True)
    for app in apps:
        s = partial(result.scalar_or_nan, "sctp", app)
        cells = [
            app,
            format_count(s("sent_bytes")),
            format_count(s("fast_retransmissions")),
            format_count(s("timeout_retransmissions")),
            format_count(s("t3_timeouts")),
            format_count(s("heartbeats_sent")),
        ]
        if goodput:
            cells += [format_rate(s("goodput")), format_float(s("completion_time"), digits=3)]
        table.add_row(*cells)
    return table


def _real_table(result: RunResult) -> Table | None:
    # Real mode (sctpsim real): the UDP driver's counters.
    entities = _entities(result, "real")
    if not entities:
        return None
    table = _table(
        "Real sockets (UDP datagrams)",
        [
            ("app", "left"),
            ("sent", "right"),
            ("received", "right"),
            ("fault drops out", "right"),
            ("fault drops in", "right"),
            ("socket full", "right"),
            ("bad CRC", "right"),
            ("refused", "right"),
            ("check errors", "right"),
        ],
    )
    for app in entities:
        s = partial(result.scalar_or_nan, "real", app)
        table.add_row(
            app,
            format_count(s("datagrams_sent")),
            format_count(s("datagrams_received")),
            format_count(s("fault_dropped_tx")),
            format_count(s("fault_dropped_rx")),
            format_count(s("send_blocked")),
            format_count(s("bad_checksum")),
            format_count(s("rejected_over_limit")),
            format_count(s("check_errors")),
        )
    return table


def _sctp_failover_table(result: RunResult) -> Table | None:
    # Only for runs where a fault broke a sender's primary path.
    apps = _sctp_apps(result, "primary_break_at")
    if not apps:
        return None
    table = _table(
        "SCTP failover (s after the primary path broke)",
        [
            ("app", "left"),
            ("broke at s", "right"),
            ("PF", "right"),
            ("alt rtx", "right"),
            ("data moved", "right"),
            ("failover", "right"),
            ("switch-back", "right"),
        ],
    )
    for app in apps:
        s = partial(result.scalar_or_nan, "sctp", app)
        table.add_row(
            app,
            format_float(s("primary_break_at"), digits=3),
            *(
                format_float(s(metric), digits=3)
                for metric in (
                    "pf_time",
                    "first_alternate_rtx_time",
                    "data_moved_time",
                    "failover_time",
                    "switch_back_time",
                )
            ),
        )
    return table


def _sctp_paths_table(result: RunResult) -> Table | None:
    paths = _entities(result, "sctp_path")
    if not paths:
        return None
    table = _table(
        "SCTP paths (one per peer address; state at the end)",
        [
            ("path", "left"),
            ("state", "left"),
            ("packets", "right"),
            ("data B", "right"),
            ("rtx B", "right"),
            ("acked B", "right"),
            ("T3", "right"),
        ],
    )
    # Real runs report each path's final SRTT and RTO; simulated runs sample them instead.
    rtt = any(not _bad(result.scalar_or_nan("sctp_path", p, "rto")) for p in paths)
    if rtt:
        table.add_column("SRTT ms", justify="right", no_wrap=True)
        table.add_column("RTO ms", justify="right", no_wrap=True)
    for path in paths:
        s = partial(result.scalar_or_nan, "sctp_path", path)
        cells = [
            path,
            format_path_state(s("state")),
            format_count(s("packets_sent")),
            format_count(s("bytes_sent")),
            format_count(s("bytes_retransmitted")),
            format_count(s("bytes_acked")),
            format_count(s("t3_timeouts")),
        ]
        if rtt:
            cells += [format_ms(s("srtt")), format_ms(s("rto"))]
        table.add_row(*cells)
    return table


def _sctp_path_data_table(result: RunResult) -> Table | None:
    # Paths that carried new data (a sender's): how it was shared and recovered.
    paths = [
        p
        for p in _entities(result, "sctp_path")
        if not _bad(result.scalar_or_nan("sctp_path", p, "new_data_share"))
    ]
    if not paths:
        return None
    table = _table(
        "SCTP paths: new data (stopped, resumed: s after the break)",
        [
            ("path", "left"),
            ("new data", "right"),
            ("fast rtx", "right"),
            ("PF", "right"),
            ("stopped", "right"),
            ("resumed", "right"),
        ],
    )
    for path in paths:
        s = partial(result.scalar_or_nan, "sctp_path", path)
        table.add_row(
            path,
            format_percent(s("new_data_share"), digits=1),
            format_count(s("fast_retransmissions")),
            format_count(s("pf_episodes")),
            format_float(s("new_data_stopped_time"), digits=3),
            format_float(s("new_data_resumed_time"), digits=3),
        )
    return table


def _sctp_reordering_table(result: RunResult) -> Table | None:
    apps = _sctp_apps(result, "reordered_tsns")
    if not apps:
        return None
    table = _table(
        "SCTP reordering and receive-window blocking",
        [("app", "left"), ("TSNs out of order", "right"), ("rwnd-blocked s", "right")],
    )
    for app in apps:
        s = partial(result.scalar_or_nan, "sctp", app)
        table.add_row(
            app, format_count(s("reordered_tsns")), format_float(s("rwnd_blocked_time"), digits=3)
        )
    return table


def _groups_table(result: RunResult) -> Table | None:
    groups = _entities(result, "group")
    if not groups:
        return None
    table = _table(
        "Groups (TCP flows)",
        [
            ("group", "left"),
            ("flows", "right"),
            ("goodput sum", "right"),
            ("mean", "right"),
            ("min", "right"),
            ("max", "right"),
            ("Jain index", "right"),
        ],
    )
    for group in groups:
        s = partial(result.scalar_or_nan, "group", group)
        table.add_row(
            group,
            format_count(s("flows")),
            format_rate(s("goodput_sum")),
            format_rate(s("goodput_mean")),
            format_rate(s("goodput_min")),
            format_rate(s("goodput_max")),
            format_float(s("jain_index"), digits=3),
        )
    return table


def _ifaces_table(result: RunResult) -> Table | None:
    # Interfaces that sent nothing and dropped nothing are noise in a summary (a host's
    # receive-only side, an unused router port); the scalars still hold them.
    every = [i for i in _entities(result, "iface") if not _is_radio(result, i)]
    ifaces = [
        i
        for i in every
        if result.scalar_or_nan("iface", i, "tx_packets") > 0
        or result.scalar_or_nan("iface", i, "drops") > 0
    ]
    if not ifaces:
        return None
    idle = len(every) - len(ifaces)
    table = _table(
        "Interfaces (transmit side)" + (f", {idle} idle not shown" if idle else ""),
        [
            ("iface", "left"),
            ("tx pkts", "right"),
            ("utilization", "right"),
            ("queue mean pkts", "right"),
            ("queue max pkts", "right"),
            ("drops", "right"),
            ("drop reasons", "left"),
        ],
    )
    for iface in ifaces:
        s = partial(result.scalar_or_nan, "iface", iface)
        table.add_row(
            iface,
            format_count(s("tx_packets")),
            format_percent(s("utilization"), digits=1),
            format_float(s("queue_mean_packets"), digits=2),
            format_count(s("queue_max_packets")),
            format_count(s("drops")),
            _drop_reasons(result, "iface", iface),
        )
    return table


def _is_radio(result: RunResult, iface: str) -> bool:
    """True for a WLAN interface (it reports its MAC's counters)."""
    return not math.isnan(result.scalar_or_nan("iface", iface, "mac_tx_frames"))


def _radios_table(result: RunResult) -> Table | None:
    radios = [i for i in _entities(result, "iface") if _is_radio(result, i)]
    if not radios:
        return None
    channels = _entities(result, "wlan")
    title = "WLAN interfaces"
    if channels:
        shown = ", ".join(
            f"{c} (channel {format_count(result.scalar_or_nan('wlan', c, 'channel'))}: "
            f"{format_percent(result.scalar_or_nan('wlan', c, 'utilization'), digits=1)} air time, "
            f"{format_count(result.scalar_or_nan('wlan', c, 'collisions'))} frames collided)"
            for c in channels
        )
        title += f"; {shown}"
    table = _table(
        title,
        [
            ("iface", "left"),
            ("rate", "right"),
            ("data sent", "right"),
            ("acked", "right"),
            ("retries", "right"),
            ("data received", "right"),
            ("MAC delay mean ms", "right"),
            ("drops", "right"),
            ("drop reasons", "left"),
        ],
    )
    for iface in radios:
        s = partial(result.scalar_or_nan, "iface", iface)
        table.add_row(
            iface,
            format_rate(s("mac_rate")),
            format_count(s("mac_tx_data")),
            format_count(s("mac_tx_acked")),
            format_count(s("mac_retries")),
            format_count(s("mac_rx_data")),
            format_ms(s("mac_delay_mean")),
            format_count(s("drops")),
            _drop_reasons(result, "iface", iface),
        )
    return table


def _roaming_table(result: RunResult) -> Table | None:
    """Roaming WLAN interfaces: their scans, associations and handovers, with the handover
    instants when the run recorded the ``wlan`` events."""
    stations = [
        i
        for i in _entities(result, "iface")
        if not math.isnan(result.scalar_or_nan("iface", i, "wlan_handovers"))
    ]
    if not stations:
        return None
    events = result.events
    table = _table(
        "WLAN roaming",
        [
            ("iface", "left"),
            ("scans", "right"),
            ("associations", "right"),
            ("handovers", "right"),
            ("timeouts", "right"),
            ("deauthenticated", "right"),
            ("handovers at s", "left"),
        ],
    )
    for iface in stations:
        s = partial(result.scalar_or_nan, "iface", iface)
        mine = events[(events.kind == "wlan") & (events.entity == iface)]
        at = mine[mine.detail.str.startswith("step=handover ")].time_s
        table.add_row(
            iface,
            format_count(s("wlan_scans")),
            format_count(s("wlan_associations")),
            format_count(s("wlan_handovers")),
            format_count(s("wlan_timeouts")),
            format_count(s("wlan_deauthentications")),
            ", ".join(f"{t:.3f}" for t in at) if len(at) else "-",
        )
    return table


def _nodes_table(result: RunResult) -> Table | None:
    nodes = [
        node
        for node in _entities(result, "node")
        if result.scalar_or_nan("node", node, "drops") > 0  # False for NaN
    ]
    if not nodes:
        return None
    table = _table("Node drops", [("node", "left"), ("drops", "right"), ("reasons", "left")])
    for node in nodes:
        table.add_row(
            node,
            format_count(result.scalar_or_nan("node", node, "drops")),
            _drop_reasons(result, "node", node),
        )
    return table


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` at its natural width even on a narrower console: a terminal that
    wraps a long line is better than numbers cut to ``…``."""
    natural = console.measure(table, options=console.options.update_width(10_000)).maximum
    narrow = console.width
    if natural <= narrow:
        console.print(table)
        return
    console.width = natural
    try:
        console.print(table)
    finally:
        console.width = narrow


def header_line(result: RunResult) -> Text:
    """``two-path-cbr  seed 42  simulated 30 s  1,234,567 events``."""
    sim_time = result.scalar_or_nan("run", "run", "sim_time")
    events = result.scalar_or_nan("run", "run", "events")
    text = Text()
    text.append(result.name, style="bold")
    wall_time = result.scalar_or_nan("run", "run", "wall_time")
    if not _bad(wall_time):
        # Real mode (sctpsim real): wall-clock time, no simulated events.
        text.append(f"  real sockets  {wall_time:.3f} s")
        return text
    text.append(f"  seed {result.seed}")
    text.append(f"  simulated {_MISSING if _bad(sim_time) else f'{sim_time:g}'} s")
    text.append(f"  {format_count(events)} events")
    return text


def summary_tables(result: RunResult) -> list[Table]:
    """The non-empty summary tables of ``result``, in the order they are printed."""
    tables = (
        _flows_table(result),
        _tcp_table(result),
        _groups_table(result),
        _sctp_receivers_table(result),
        _sctp_senders_table(result),
        _sctp_failover_table(result),
        _sctp_paths_table(result),
        _sctp_path_data_table(result),
        _sctp_reordering_table(result),
        _real_table(result),
        _ifaces_table(result),
        _radios_table(result),
        _roaming_table(result),
        _nodes_table(result),
    )
    return [t for t in tables if t is not None]


def print_summary(result: RunResult, console: Console) -> None:
    """Print the header line and the non-empty tables of ``result`` to ``console``."""
    console.print(header_line(result))
    for table in summary_tables(result):
        console.print()
        print_table(console, table)


# ------------------------------------------------------------------- sweeps


def format_sig(x: float, digits: int = 4) -> str:
    """A number with ``digits`` significant digits (``"1.235e+07"``, ``"0.01"``), or ``-``."""
    if _bad(x):
        return _MISSING
    return f"{x:.{digits}g}"


def _cell(value: object) -> str:
    return (
        value
        if isinstance(value, str)
        else format_sig(value)
        if isinstance(value, float)
        else str(value)
    )


def sweep_tables(
    summary: pd.DataFrame, failed: pd.DataFrame, parameters: list[str]
) -> list[Text | Table]:
    """Per metric a heading and a table (mean, stdev, 95% CI per combination), then the
    failed runs."""
    tables: list[Text | Table] = []
    show_failed = bool(len(failed))
    for metric, rows in summary.groupby("metric", sort=False):
        unit = str(rows["unit"].iloc[0]) if len(rows) else ""
        tables.append(Text(f"{metric}" + (f" [{unit}]" if unit else ""), style="bold"))
        table = _table(
            "",
            [
                *((p, "left") for p in parameters),
                ("n", "right"),
                *((("failed", "right"),) if show_failed else ()),
                ("mean", "right"),
                ("stdev", "right"),
                ("95% CI (Student t)", "right"),
            ],
        )
        for values in rows.itertuples(index=False, name=None):
            cells = dict(zip(rows.columns, values, strict=True))
            low, high = cells["ci95_low"], cells["ci95_high"]
            ci = _MISSING if _bad(low) else f"{format_sig(low)} .. {format_sig(high)}"
            table.add_row(
                *(_cell(cells[p]) for p in parameters),
                str(cells["n"]),
                *((str(cells["failed"]),) if show_failed else ()),
                format_sig(cells["mean"]),
                format_sig(cells["stdev"]),
                ci,
            )
        tables.append(table)
    if show_failed:
        tables.append(Text(f"Failed runs ({len(failed)})", style="bold"))
        errors = Table()
        errors.add_column("run", justify="right", no_wrap=True)
        for p in parameters:
            errors.add_column(p, no_wrap=True)
        errors.add_column("rep", justify="right", no_wrap=True)
        errors.add_column("error", overflow="fold")
        for _, r in failed.iterrows():
            errors.add_row(
                str(r["run"]),
                *(_cell(r[p]) for p in parameters),
                str(r["replication"]),
                str(r["error"]),
            )
        tables.append(errors)
    return tables
