"""The page of one run (``sctpsim show DIR``, ``sctpsim run --report``).

:func:`write_run_report` writes ``DIR/report.html``: one self-contained file (the figures
are inline PNG data, the style is inline; no script, nothing fetched) with the scenario
(name, seed, version, the keys that differ from the defaults, the whole resolved file),
the summary tables of ``sctpsim run``, and the figures of :mod:`sctpsim.runplots`: per
SCTP association its paths and its time-sequence graph, per TCP connection its window and
timers, goodput per flow, queues. Each figure is also written as ``DIR/figure-*.png`` and
``.svg``. What the run did not record is named on the page with the key that records it.

The page holds no date or timing: the same run directory gives the same bytes.
"""

from __future__ import annotations

import base64
import html
import io
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sctpsim import _core
from sctpsim.results import FIGURE_PREFIX, REPORT_FILE, RunResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from rich.table import Table

__all__ = ["REPORT_FILE", "RunReport", "changed_keys", "write_run_report"]

#: At most this many associations (and TCP connections) get figures of their own on the
#: page, so that a run with many stays a page; the rest are named, and
#: :meth:`RunResult.paths` / :meth:`RunResult.sequence` draw any of them.
MAX_PER_KIND = 8


@dataclass
class RunReport:
    """What :func:`write_run_report` wrote."""

    html: Path
    #: Figures in page order: (title, png, svg).
    figures: list[tuple[str, Path, Path]] = field(default_factory=list)
    #: What the run did not record (one sentence each, as on the page).
    not_recorded: list[str] = field(default_factory=list)


# -------------------------------------------------------------- scenario keys


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(key path, value) of every leaf of a TOML document; lists of tables by index."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _parts(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        parts.append(int(index) if index else name)
    return parts


def _delete(doc: Any, path: str) -> None:
    *head, last = _parts(path)
    node = doc
    for p in head:
        node = node[p]
    del node[last]


def _get(doc: Any, path: str) -> Any:
    node = doc
    for p in _parts(path):
        try:
            node = node[p]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


_MISSING = object()


_NO_DEFAULT = object()
_DERIVED = object()


def _defaults() -> dict[str, Any]:
    """Each key path (``links[].delay``) -> its default value; :data:`_NO_DEFAULT` for a
    required key, :data:`_DERIVED` when the simulator derives it or the key's default
    depends on where it is (several variants disagree)."""
    out: dict[str, Any] = {}
    for p in _core.params():
        key, text = str(p["key"]), p["default"]
        if text is None:
            value: Any = _NO_DEFAULT
        elif str(text).startswith("("):
            value = _DERIVED  # "(the link's rate)": described, not a value
        else:
            try:
                value = tomllib.loads(f"v = {text}")["v"]
            except tomllib.TOMLDecodeError:
                value = str(text)
        if key in out and out[key] != value:
            value = _DERIVED
        out[key] = value
    return out


def changed_keys(resolved: str) -> list[tuple[str, Any]]:
    """Keys of a resolved scenario that differ from the defaults, in file order.

    A key with a default is listed when its value differs from it; a required key is
    always listed; a key the simulator derives (names, ports, a direction's rate) is
    listed when leaving it out would change the scenario (its value comes out
    different, or the scenario becomes invalid because other keys refer to it).
    """
    from sctpsim import _toml

    doc = tomllib.loads(resolved)
    defaults = _defaults()
    out: list[tuple[str, Any]] = []
    for path, value in _leaves(doc):
        if path in ("seed", "version"):
            continue
        default = defaults.get(re.sub(r"\[\d+\]", "[]", path), _DERIVED)
        if default is _NO_DEFAULT:
            out.append((path, value))
            continue
        if default is not _DERIVED:
            if value != default:
                out.append((path, value))
            continue
        trial = tomllib.loads(resolved)
        _delete(trial, path)
        try:
            again = tomllib.loads(_core.check(_toml.dumps(trial), []))
        except (ValueError, RuntimeError):
            out.append((path, value))
            continue
        if _get(again, path) != value:
            out.append((path, value))
    return out


def _by_entry(keys: list[tuple[str, Any]], doc: Mapping[str, Any]) -> list[tuple[str, list[tuple[str, Any]]]]:
    """Keys grouped by the entry they belong to (``links[1] R1-B``, ``record``, or the top
    level; an entry of a list with its name), each key relative to it, in file order."""
    groups: dict[str, list[tuple[str, Any]]] = {}
    for path, value in keys:
        m = re.match(r"([^.\[]+\[\d+\])\.(.+)|([^.\[]+)\.(.+)", path)
        entry, key = (m.group(1) or m.group(3), m.group(2) or m.group(4)) if m else ("(top level)", path)
        if m and m.group(1):
            name = _get(doc, f"{entry}.name")
            if isinstance(name, str):
                entry = f"{entry} {name}"
        groups.setdefault(entry, []).append((key, value))
    return list(groups.items())


def _capped(names: list[str], what: str, report: RunReport) -> list[str]:
    """The first :data:`MAX_PER_KIND` of ``names``; the rest noted on the page."""
    if len(names) <= MAX_PER_KIND:
        return names
    rest = names[MAX_PER_KIND:]
    report.not_recorded.append(
        f"Figures of {len(rest)} more {what} ({', '.join(rest[:10])}{', ...' if len(rest) > 10 else ''}): "
        f"the page draws the first {MAX_PER_KIND}; RunResult.paths(name) and RunResult.sequence(name) "
        "draw any of them."
    )
    return names[:MAX_PER_KIND]


# -------------------------------------------------------------------- HTML


def _toml_value(value: Any) -> str:
    from sctpsim import _toml

    try:
        return _toml.literal(value)
    except (TypeError, ValueError):
        return str(value)


def _rich_table_html(table: Table) -> str:
    """A rich table of the summary as an HTML table (numbers right-aligned)."""
    esc = html.escape
    columns = list(table.columns)
    head = "".join(f"<th>{esc(str(c.header))}</th>" for c in columns)
    cells = [[str(v) for v in c.cells] for c in columns]
    rows = []
    for r in range(max((len(c) for c in cells), default=0)):
        tds = "".join(
            f'<td class="num">{esc(col[r])}</td>' if c.justify == "right" else f"<td>{esc(col[r])}</td>"
            for c, col in zip(columns, cells, strict=True)
        )
        rows.append(f"<tr>{tds}</tr>")
    title = f"<h3>{esc(str(table.title))}</h3>" if table.title else ""
    return f"{title}<table><tr>{head}</tr>{''.join(rows)}</table>"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


_HOW_PATHS = (
    "One colour per path (path i is the peer's i-th address). Solid: cwnd (top) and RTO "
    "(middle, log scale); dashed: ssthresh and SRTT; dotted: flight size. Vertical lines: "
    "faults (red) and the association's events: T3-rtx expiry, a path becoming PF, inactive "
    "or active again, failover and switch-back of the data path. Sampled every record.interval."
)
_HOW_TCP = (
    "Solid: cwnd (top) and RTO (bottom, log scale); dashed: ssthresh and SRTT; dotted: bytes "
    "in flight. Vertical lines: faults (red) and retransmission timeouts."
)
_HOW_GOODPUT = (
    "Application bytes received per sampling interval, as a rate. When a retransmission fills "
    "a gap, everything that waited behind it is delivered at once: a spike above the link rate."
)
_HOW_QUEUES = (
    "Packets waiting in each output queue that ever held one or dropped one; the legend gives "
    "the drops and their reasons (with drop events logged, their times are drawn below)."
)
_HOW_SEQUENCE = (
    "Each DATA chunk's TSN when it was sent, one colour per path: a line while chunks follow "
    "one another, a cross for a retransmission. Black: the cumulative TSN ack of each SACK "
    "received; grey: the highest TSN a SACK reports (gap ack blocks). The lower panel shows "
    "the five seconds around the first fault (shaded above)."
)

_EXTRA_STYLE = """
body { max-width: 72rem; }
pre.toml { background: #f7f7f7; padding: .6rem; font-size: .8rem; overflow-x: auto; }
ul.missing li { margin: .2rem 0; } figure img { display: block; }
table.keys td { font-size: .82rem; } table.keys code { background: none; padding: 0; white-space: nowrap; }
"""


def _version(resolved: str, doc: Mapping[str, Any]) -> str:
    m = re.match(r"# Resolved by sctpsim (\S+?):", resolved)
    if m:
        return m.group(1)
    return str(doc.get("version", "unknown"))


def write_run_report(
    directory: str | os.PathLike[str],
    result: RunResult | None = None,
    *,
    width: int = 1100,
) -> RunReport:
    """Write ``DIR/report.html`` and the figures ``DIR/figure-*.png|svg``.

    Args:
        directory: a run directory (``sctpsim run`` output).
        result: the run's result when already in memory (else read from ``directory``).
        width: figure width in pixels.

    Raises:
        FileNotFoundError: ``directory`` is not a run directory.
        ValueError: its files are not what a run writes.
    """
    import matplotlib

    from sctpsim import runplots
    from sctpsim.report import _STYLE
    from sctpsim.summary import summary_tables

    d = Path(directory)
    if result is None:
        result = RunResult.load(d)
    doc = tomllib.loads(result.scenario)
    record = doc.get("record", {})
    report = RunReport(html=d / REPORT_FILE)
    esc = html.escape
    for old in d.glob(f"{FIGURE_PREFIX}*"):
        old.unlink()

    body: list[str] = []
    figures_html: list[str] = []

    def add_figure(key: str, title: str, make: Any, how: str = "") -> None:
        try:
            fig: Figure = make()
        except runplots.NotRecorded as e:
            report.not_recorded.append(f"{title}: {e}.")
            return
        stem = d / f"{FIGURE_PREFIX}{_slug(key)}"
        png, svg = stem.with_suffix(".png"), stem.with_suffix(".svg")
        buf = io.BytesIO()
        # Text as text in SVG (searchable, small, and far quicker than glyph outlines).
        with matplotlib.rc_context({"svg.hashsalt": "sctpsim", "svg.fonttype": "none"}):
            # Light compression: a little larger, much quicker to write.
            fig.savefig(buf, format="png", metadata={"Software": None}, pil_kwargs={"compress_level": 2})
            fig.savefig(svg, format="svg", metadata={"Date": None})
        png.write_bytes(buf.getvalue())
        report.figures.append((title, png, svg))
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        figures_html.append(
            f'<figure id="{esc(_slug(key))}"><img alt="{esc(title)}" src="data:image/png;base64,{data}">'
            f"<figcaption><strong>{esc(title)}.</strong> {esc(how)} "
            f'(<a href="{esc(svg.name)}">SVG</a>, <a href="{esc(png.name)}">PNG</a>)</figcaption></figure>'
        )

    series = runplots.SeriesIndex(result)
    sections: list[tuple[str, list[str]]] = []
    if not series:
        report.not_recorded.append(
            "Time series (cwnd, ssthresh, flight size, SRTT, RTO per path; goodput; queues): "
            'record.interval is 0; set it above zero (e.g. --set record.interval=100ms).'
        )
    else:
        assocs = _capped(runplots.association_names(result, series), "SCTP associations", report)
        for assoc in assocs:
            add_figure(f"paths-{assoc}", f"SCTP association {assoc}: window, timers and state per path",
                       lambda a=assoc: runplots.paths_figure(result, a, width=width), _HOW_PATHS)
        for conn in _capped(runplots.tcp_names(series), "TCP connections", report):
            add_figure(f"tcp-{conn}", f"TCP connection {conn}: window and timers",
                       lambda c=conn: runplots.tcp_figure(result, c, width=width), _HOW_TCP)
        sections.append(("Paths and connections", figures_html[:]))
        figures_html.clear()
        add_figure("goodput", "Goodput per flow", lambda: runplots.flows_figure(result, width=width), _HOW_GOODPUT)
        add_figure("queues", "Queue occupancy and drops", lambda: runplots.queues_figure(result, width=width),
                   _HOW_QUEUES)
        sections.append(("Flows and queues", figures_html[:]))
        figures_html.clear()
    packets = result.packets
    if packets is None:
        report.not_recorded.append(
            "Time-sequence graphs (TSN against time per association): the packet log is off; "
            "set record.packets = true (e.g. --set record.packets=true)."
        )
    else:
        logged = [str(a) for a in packets["association"].cat.categories]
        for assoc in _capped(logged, "time-sequence graphs", report):
            add_figure(f"sequence-{assoc}", f"Time-sequence graph of SCTP association {assoc}",
                       lambda a=str(assoc): runplots.sequence_figure(result, a, width=width), _HOW_SEQUENCE)
        sections.append(("Time-sequence graphs", figures_html[:]))
        figures_html.clear()
    events = [str(e) for e in record.get("events", [])]
    for kind, what in (
        ("fault", "fault markers"),
        ("sctp", "SCTP event markers (T3 expiry, PF, inactive, failover, switch-back)"),
        ("drop", "drop times (the queue figure shows drop totals only)"),
    ):
        if kind not in events:
            report.not_recorded.append(
                f'{what[0].upper()}{what[1:]}: record.events does not include "{kind}".'
            )

    # ---- the page
    title = f"{result.name} — sctpsim run"
    body.append(f"<h1>{esc(result.name)}</h1>")
    sim_time = result.scalar_or_nan("run", "run", "sim_time")
    events_n = result.scalar_or_nan("run", "run", "events")
    body.append(
        f'<p class="meta">seed {result.seed} · simulated {sim_time:g} s · '
        f"{events_n:,.0f} events · sctpsim {esc(_version(result.scenario, doc))} · "
        "page written by <code>sctpsim show</code></p>"
    )
    nav = ["scenario", "summary", *(_slug(name) for name, _ in sections)]
    titles = ["Scenario", "Summary", *(name for name, _ in sections)]
    if report.not_recorded:
        nav.append("not-recorded")
        titles.append("Not recorded or not drawn")
    body.append(
        "<nav><ul>"
        + "".join(f'<li><a href="#{n}">{esc(t)}</a></li>' for n, t in zip(nav, titles, strict=True))
        + "</ul></nav>"
    )
    body.append('<h2 id="scenario">Scenario</h2>')
    changed = changed_keys(result.scenario)
    body.append(
        "<p>The keys that differ from the defaults, by entry (every key with the value used is "
        "in the resolved scenario below; <code>sctpsim params</code> lists every key and its "
        "default):</p>"
    )
    rows = "".join(
        f"<tr><td><code>{esc(entry)}</code></td><td>"
        + " · ".join(f"<code>{esc(k)} = {esc(_toml_value(v))}</code>" for k, v in keys)
        + "</td></tr>"
        for entry, keys in _by_entry(changed, doc)
    )
    body.append(f'<table class="keys"><tr><th>entry</th><th>keys</th></tr>{rows}</table>')
    body.append(
        "<details><summary>Resolved scenario (<code>scenario.toml</code>)</summary>"
        f'<pre class="toml">{esc(result.scenario)}</pre></details>'
    )
    body.append('<h2 id="summary">Summary</h2>')
    body.extend(_rich_table_html(t) for t in summary_tables(result))
    for name, figs in sections:
        body.append(f'<h2 id="{_slug(name)}">{esc(name)}</h2>')
        body.extend(figs or ["<p>Nothing to draw.</p>"])
    if report.not_recorded:
        body.append('<h2 id="not-recorded">Not recorded or not drawn</h2>')
        body.append(
            '<ul class="missing">' + "".join(f"<li>{esc(s)}</li>" for s in report.not_recorded) + "</ul>"
        )
    page = "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{esc(title)}</title>",
            f"<style>{_STYLE}{_EXTRA_STYLE}</style></head><body>",
            *body,
            "</body></html>",
        ]
    )
    tmp = report.html.with_name(f".{REPORT_FILE}.tmp")
    tmp.write_text(page + "\n", encoding="utf-8")
    tmp.replace(report.html)
    return report
