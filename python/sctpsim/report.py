"""Reports of a reproduction: the comparison tables on the console and one HTML file.

:func:`write_report` writes a single self-contained HTML page (the figures are embedded
as PNG data, the style is inline, nothing is fetched), so it opens offline and can be
mailed as one file. The page has no date or timing in it: the same results give the same
bytes. :func:`print_comparisons` prints the same tables with rich.

A comparison with a :class:`~sctpsim.reproduce.Matrix` is shown in the paper's own shape
(:func:`matrix_table`): the paper's rows and columns, each cell ``paper | ours [95% CI]``
with the difference below it, coloured by its size (:func:`difference_level`). A number
we do not reproduce shows as ``–``, never as zero. The long form stays in the CSV and,
folded, on the page.

Texts (the study README, the discussion under each table) are a small Markdown subset:
headings, paragraphs, ``-`` lists, pipe tables, ``code``, **bold**, *italics* and
``[links](url)``.
"""

from __future__ import annotations

import base64
import functools
import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sctpsim import _core

if TYPE_CHECKING:
    import pandas as pd
    from markdown_it import MarkdownIt
    from rich.console import Console

    from sctpsim.reproduce import Comparison, Figure, Study, Table
    from sctpsim.sweep import Sweep

__all__ = [
    "LEVELS",
    "MatrixTable",
    "difference_level",
    "format_number",
    "markdown_to_html",
    "matrix_table",
    "print_comparisons",
    "write_report",
]


# ----------------------------------------------------------------- numbers


def format_number(value: Any, exact: bool = False) -> str:
    """A number for a table cell: ``exact`` keeps every digit (the paper's numbers, as
    transcribed); otherwise five significant digits. NaN and missing values are ``–``.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return str(value)
    x = float(value)
    if exact:
        text = repr(x)
        if "e" in text:
            return f"{x:g}"
        return text[:-2] if text.endswith(".0") else text
    if x != 0 and (abs(x) >= 1e9 or abs(x) < 1e-3):
        return f"{x:.4e}"
    if abs(x) >= 1e5:
        return f"{x:.0f}"
    if abs(x) >= 1e4:
        return f"{x:.1f}"
    return f"{x:.5g}"


def _ci(row: Mapping[str, Any]) -> str:
    lo, hi = row["ci95_low"], row["ci95_high"]
    if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
        return "–"
    return f"[{format_number(lo)}, {format_number(hi)}]"


def _pct(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:+.1f} %"


def _plain_cells(frame: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a free-form table as display text."""
    header = [str(c) for c in frame.columns]
    rows = [
        [
            format_number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
            for v in row
        ]
        for row in frame.itertuples(index=False)
    ]
    return header, rows


def _is_comparison(table: Comparison | Table) -> bool:
    return hasattr(table, "labels")


def _cells(comparison: Comparison | Table) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a comparison as display text."""
    if not _is_comparison(comparison):
        return _plain_cells(comparison.frame)
    labels = comparison.labels  # type: ignore[union-attr]
    header = [*labels, "quantity", "unit", "paper", "ours (mean)", "95% CI", "n", "diff", "diff %"]
    rows: list[list[str]] = []
    for _, r in comparison.frame.iterrows():
        rows.append(
            [
                *(
                    format_number(r[k], exact=True) if isinstance(r[k], float) else str(r[k])
                    for k in labels
                ),
                str(r["quantity"]),
                str(r["unit"]),
                format_number(r["paper"], exact=True),
                format_number(r["ours"]),
                _ci(r),
                str(int(r["n"])) if int(r["n"]) else "–",
                format_number(r["diff"]),
                _pct(r["diff_pct"]),
            ]
        )
    return header, rows


# ------------------------------------------------------------------ matrices

#: Classes of the difference ours − paper, by its size in percent of the paper's value:
#: (name, upper bound of |diff %| (inclusive), what the legend says). ``missing`` is a
#: number on one side only.
LEVELS: tuple[tuple[str, float, str], ...] = (
    ("close", 5.0, "within 5 %"),
    ("fair", 15.0, "5–15 %"),
    ("far", 50.0, "15–50 %"),
    ("off", math.inf, "more than 50 %"),
)
_HTML_COLOURS = {
    "close": "#d7efd7",
    "fair": "#fbf0c0",
    "far": "#fbd6b0",
    "off": "#f6bcbc",
    "missing": "#ececec",
}
_RICH_STYLES = {"close": "green", "fair": "yellow", "far": "dark_orange", "off": "red bold"}
_COLOUR_NAMES = {"close": "green", "fair": "yellow", "far": "orange", "off": "red"}


def _nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def difference_level(paper: float, ours: float) -> str:
    """How far ours is from the paper's number: a :data:`LEVELS` name, or ``missing``
    when either side has no number."""
    if _nan(paper) or _nan(ours):
        return "missing"
    if ours == paper:
        return "close"
    if paper == 0:
        return "off"
    pct = abs(100.0 * (ours - paper) / paper)
    return next(name for name, bound, _ in LEVELS if pct <= bound)


def _label(value: Any) -> str:
    if isinstance(value, float):
        return format_number(value, exact=True)
    return str(value)


@dataclass
class MatrixTable:
    """A comparison pivoted into the paper's shape (see :class:`~sctpsim.reproduce.Matrix`).

    Attributes:
        row_names: the label columns down the side.
        column_names: the label columns across the top.
        rows: one tuple of row-label texts per table row, in the paper's order.
        columns: one tuple of column-label texts per table column.
        cells: (row, column) -> the long-form row of that cell; a cell the paper's
            table has no number for is absent.
    """

    row_names: list[str]
    column_names: list[str]
    rows: list[tuple[str, ...]]
    columns: list[tuple[str, ...]]
    cells: dict[tuple[tuple[str, ...], tuple[str, ...]], pd.Series]

    def cell(self, row: tuple[str, ...], column: tuple[str, ...]) -> pd.Series | None:
        return self.cells.get((row, column))


def matrix_table(comparison: Comparison) -> MatrixTable:
    """Pivot ``comparison`` (which has a ``matrix``) into the paper's shape.

    Raises:
        ValueError: the matrix names a column the table lacks, or two rows of the long
            form fall into one cell.
    """
    spec = comparison.matrix
    if spec is None:
        raise ValueError(f"table {comparison.id}: no matrix shape")
    frame = comparison.frame
    for name in (*spec.rows, *spec.columns):
        if name not in frame:
            raise ValueError(f"table {comparison.id}: matrix column {name!r} is not in the table")
    rows: dict[tuple[str, ...], None] = {}
    columns: dict[tuple[str, ...], None] = {}
    cells: dict[tuple[tuple[str, ...], tuple[str, ...]], pd.Series] = {}
    for _, r in frame.iterrows():
        rk = tuple(_label(r[k]) for k in spec.rows)
        ck = tuple(_label(r[k]) for k in spec.columns)
        if (rk, ck) in cells:
            raise ValueError(
                f"table {comparison.id}: two rows fall into the cell {', '.join(rk)} / "
                f"{', '.join(ck)} (add a label column to the matrix rows or columns)"
            )
        rows.setdefault(rk)
        columns.setdefault(ck)
        cells[(rk, ck)] = r
    return MatrixTable(list(spec.rows), list(spec.columns), list(rows), list(columns), cells)


def _decimals(paper: float) -> int | None:
    """Digits after the point of the paper's number as transcribed (``None``: use five
    significant digits)."""
    text = format_number(paper, exact=True)
    if _nan(paper) or "e" in text:
        return None
    return len(text.split(".", 1)[1]) if "." in text else 0


def _ours_text(value: float, decimals: int | None) -> str:
    if _nan(value):
        return "–"
    if decimals is None:
        return format_number(value)
    return f"{value:.{decimals}f}"


@dataclass(frozen=True)
class _CellText:
    """The texts of one matrix cell."""

    paper: str
    ours: str
    ci: str
    diff: str
    level: str
    detail: str


def _cell_text(r: pd.Series, decimals: int | None) -> _CellText:
    """Ours with ``decimals`` digits after the point (the long form keeps every digit)."""
    paper, ours = r["paper"], r["ours"]
    lo, hi = r["ci95_low"], r["ci95_high"]
    ci = "" if _nan(lo) or _nan(hi) or _nan(ours) else (
        f"[{_ours_text(lo, decimals)}, {_ours_text(hi, decimals)}]"
    )
    level = difference_level(paper, ours)
    if level == "missing":
        diff = "not reproduced" if _nan(ours) else "no paper value"
    elif _nan(r["diff_pct"]):
        diff = f"{r['diff']:+.{decimals if decimals is not None else 3}f}"
    else:
        diff = _pct(r["diff_pct"])
    n = int(r["n"])
    detail = (
        f"ours − paper = {format_number(r['diff'])}, n = {n}, ref {r['ref']}"
        if not _nan(ours) and not _nan(paper)
        else f"n = {n}" + (f", ref {r['ref']}" if r["ref"] else "")
    )
    paper_text = format_number(paper, exact=True) if decimals is None else _ours_text(paper, decimals)
    return _CellText(paper_text, _ours_text(ours, decimals), ci, diff, level, detail)


def _column_decimals(m: MatrixTable) -> dict[tuple[tuple[str, ...], str], int | None]:
    """The paper's precision per matrix column and unit: the most digits after the point
    any of its numbers has (a transcribed 10.70 reads back as 10.7; its neighbours say
    that the paper printed two decimals). ``None`` (five significant digits) where the
    paper has no number or writes one with an exponent."""
    seen: dict[tuple[tuple[str, ...], str], list[int | None]] = {}
    for (_, column), r in m.cells.items():
        if not _nan(r["paper"]):
            seen.setdefault((column, str(r["unit"])), []).append(_decimals(r["paper"]))
    return {
        key: None if any(d is None for d in ds) else max(d for d in ds if d is not None)
        for key, ds in seen.items()
    }


def _cell_texts(m: MatrixTable) -> dict[tuple[tuple[str, ...], tuple[str, ...]], _CellText]:
    decimals = _column_decimals(m)
    return {
        key: _cell_text(r, decimals.get((key[1], str(r["unit"]))))
        for key, r in m.cells.items()
    }


def _runs_line(frame: pd.DataFrame) -> str:
    n = sorted({int(v) for v in frame["n"] if int(v)})
    if not n:
        return "no runs"
    counts = f"{n[0]}" if len(n) == 1 else f"{n[0]}–{n[-1]}"
    return f"ours: mean of {counts} run{'s' if n[-1] > 1 else ''} per cell"


# ----------------------------------------------------------------- console


def print_comparisons(console: Console, comparisons: Sequence[Comparison | Table]) -> None:
    """Print each comparison table with its notes and discussion."""
    from rich.markdown import Markdown
    from rich.markup import escape
    from rich.table import Table

    for c in comparisons:
        if _is_comparison(c) and getattr(c, "matrix", None) is not None:
            _print_matrix(console, c)  # type: ignore[arg-type]
            if c.text:
                console.print(Markdown(c.text))
            console.print()
            continue
        header, rows = _cells(c)
        table = Table(title=escape(c.title), title_justify="left", title_style="bold")
        numeric_columns = _numeric_columns(c, header, rows)
        for h in header:
            numeric = h in numeric_columns
            # Numbers never wrap; rich narrows the text columns first.
            table.add_column(
                escape(h),
                justify="right" if numeric else "left",
                no_wrap=numeric,
                overflow="ellipsis" if numeric else "fold",
            )
        notes = _notes(c)
        if notes:
            table.add_column("note", overflow="fold")
        for (_, r), row in zip(c.frame.iterrows(), rows, strict=True):
            mark = [f"({notes.index(r['note']) + 1})" if r["note"] else ""] if notes else []
            table.add_row(*(escape(v) for v in row), *mark)
        console.print(table)
        for i, note in enumerate(notes, 1):
            console.print(f"  [dim]({i}) {escape(note)}[/dim]")
        if c.text:
            console.print(Markdown(c.text))
        console.print()


def _print_matrix(console: Console, c: Comparison) -> None:
    """The table in the paper's shape: ``paper | ours [CI]`` over the difference."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    m = matrix_table(c)
    texts = _cell_texts(m)
    notes = _notes(c)
    table = Table(title=escape(c.title), title_justify="left", title_style="bold")
    for name in m.row_names:
        table.add_column(Text(name), overflow="fold")
    top = ", ".join(m.column_names)
    for i, key in enumerate(m.columns):
        table.add_column(Text(f"{top if i == 0 else ''}\n{', '.join(key)}"), justify="right")
    for i, row in enumerate(m.rows):
        shown = [
            "" if i and j == 0 and len(row) > 1 and m.rows[i - 1][0] == row[0] else v
            for j, v in enumerate(row)
        ]
        cells: list[Text | str] = []
        for column in m.columns:
            r = m.cell(row, column)
            if r is None:
                cells.append("")
                continue
            t = texts[(row, column)]
            text = Text(f"{t.paper} | {t.ours}\n" + (f"{t.ci}\n" if t.ci else ""))
            text.append(t.diff, style=_RICH_STYLES.get(t.level, "dim"))
            if r["note"]:
                text.append(f" ({notes.index(r['note']) + 1})")
            cells.append(text)
        last = i + 1 == len(m.rows) or (len(row) > 1 and m.rows[i + 1][0] != row[0])
        table.add_row(*(Text(v) for v in shown), *cells, end_section=last)
    console.print(table)
    legend = "; ".join(f"{desc} {_COLOUR_NAMES[name]}" for name, _, desc in LEVELS)
    console.print(
        f"  [dim]cell: paper | ours [95% CI], then ours − paper ({legend}); "
        f"{_runs_line(c.frame)}; long form: tables/{escape(c.id)}.csv[/dim]"
    )
    for i, note in enumerate(notes, 1):
        console.print(f"  [dim]({i}) {escape(note)}[/dim]")


def _notes(c: Comparison | Table) -> list[str]:
    if not _is_comparison(c):
        return []
    return list(dict.fromkeys(n for n in c.frame["note"] if isinstance(n, str) and n))


def _numeric_columns(c: Comparison | Table, header: list[str], rows: list[list[str]]) -> set[str]:
    if _is_comparison(c):
        return {"paper", "ours (mean)", "n", "diff", "diff %", "95% CI"}
    return {
        h
        for i, h in enumerate(header)
        if rows and all(re.fullmatch(r"[-+–\d.,e% \[\]]*", r[i]) for r in rows)
    }


# -------------------------------------------------------------------- HTML

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 68rem;
       margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem;
  border-bottom: 1px solid #ccc; padding-bottom: .2rem; } h3 { margin-top: 1.6rem; }
.meta { color: #555; } code { background: #f3f3f3; padding: 0 .2rem; border-radius: 3px; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .88rem; }
th, td { border: 1px solid #d0d0d0; padding: .2rem .45rem; vertical-align: top; }
th { background: #f0f0f0; text-align: left; } td.num { text-align: right;
  font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.missing td { color: #888; } .note { font-size: .85rem; color: #444; }
figure { margin: 1.2rem 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: .9rem; color: #333; } .warn { background: #fff3cd; padding: .5rem;
  border: 1px solid #e0c36a; } nav ul { columns: 2; }
table.matrix td.cell { text-align: right; font-variant-numeric: tabular-nums; }
.cell span, .cell strong { white-space: nowrap; } div.wide { overflow-x: auto; }
table.matrix th.group { text-align: center; } table.matrix th.key { text-align: right; } table.matrix tr.top td, table.matrix tr.top th {
  border-top: 2px solid #999; } .cell .ci { display: block; color: #555; font-size: .8rem; }
.cell .diff { display: block; font-size: .8rem; color: #333; }
td.close { background: #d7efd7; } td.fair { background: #fbf0c0; } td.far { background: #fbd6b0; }
td.off { background: #f6bcbc; } td.missing { background: #ececec; color: #777; }
.legend span { display: inline-block; padding: 0 .4rem; margin-right: .3rem; border: 1px solid #ccc; }
details { margin: .4rem 0 1rem; } summary { cursor: pointer; color: #444; font-size: .9rem; }
"""


@functools.cache
def _markdown() -> MarkdownIt:
    """CommonMark with tables (markdown-it-py, the parser rich uses); raw HTML is escaped."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _inline(text: str) -> str:
    """One line of inline Markdown (code spans, links, emphasis) as HTML, without a paragraph."""
    return _markdown().renderInline(text)


def markdown_to_html(text: str, heading_offset: int = 0) -> str:
    """A Markdown document (a study README, a comparison's text) as HTML, its headings moved
    `heading_offset` levels down so that they nest under the report's own."""
    md = _markdown()
    tokens = md.parse(text)
    for t in tokens:
        if t.type in ("heading_open", "heading_close"):
            t.tag = f"h{min(6, int(t.tag[1:]) + heading_offset)}"
    return md.renderer.render(tokens, md.options, {})


def _table_html(c: Comparison | Table) -> str:
    header, rows = _cells(c)
    numeric = _numeric_columns(c, header, rows)
    notes = _notes(c)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    if notes:
        head += "<th>note</th>"
    body: list[str] = []
    for (_, r), cells in zip(c.frame.iterrows(), rows, strict=True):
        missing = "ours" in r and isinstance(r["ours"], float) and math.isnan(r["ours"])
        tds = "".join(
            f'<td class="num">{html.escape(v)}</td>'
            if h in numeric
            else f"<td>{html.escape(v)}</td>"
            for h, v in zip(header, cells, strict=True)
        )
        if notes:
            note = r["note"]
            tds += f"<td>({notes.index(note) + 1})</td>" if note else "<td></td>"
        body.append(f"<tr{' class=missing' if missing else ''}>{tds}</tr>")
    legend = "".join(f'<p class="note">({i}) {_inline(n)}</p>' for i, n in enumerate(notes, 1))
    return f"<table><tr>{head}</tr>{''.join(body)}</table>{legend}"


def _matrix_html(c: Comparison) -> str:
    """The table in the paper's shape, its legend, and the long form folded under it."""
    esc = html.escape
    m = matrix_table(c)
    texts = _cell_texts(m)
    notes = _notes(c)
    names = "".join(f'<th rowspan="2">{esc(n)}</th>' for n in m.row_names)
    head = (
        f'<tr>{names}<th class="group" colspan="{len(m.columns)}">'
        f"{esc(', '.join(m.column_names))}</th></tr>"
        + "<tr>"
        + "".join(f'<th class="key">{esc(", ".join(k))}</th>' for k in m.columns)
        + "</tr>"
    )
    body: list[str] = []
    for i, row in enumerate(m.rows):
        grouped = len(row) > 1
        first = not grouped or i == 0 or m.rows[i - 1][0] != row[0]
        span = 1
        while grouped and i + span < len(m.rows) and m.rows[i + span][0] == row[0]:
            span += 1  # the run of rows under this outer label
        labels = ""
        for j, value in enumerate(row):
            if j == 0 and grouped:
                if first:
                    labels += f'<th rowspan="{span}">{esc(value)}</th>'
            else:
                labels += f"<th>{esc(value)}</th>"
        tds = []
        for column in m.columns:
            r = m.cell(row, column)
            if r is None:
                tds.append('<td class="cell"></td>')
                continue
            t = texts[(row, column)]
            mark = f" ({notes.index(r['note']) + 1})" if r["note"] else ""
            ci = f' <span class="ci">{esc(t.ci)}</span>' if t.ci else ""
            # A narrow column wraps between the paper's number and ours, never inside one.
            tds.append(
                f'<td class="cell {t.level}" title="{esc(t.detail)}"><span>{esc(t.paper)} |</span> '
                f"<strong>{esc(t.ours)}</strong>{ci}"
                f'<span class="diff">{esc(t.diff)}{esc(mark)}</span></td>'
            )
        top = ' class="top"' if grouped and first and i else ""
        body.append(f"<tr{top}>{labels}{''.join(tds)}</tr>")
    legend = "".join(
        f'<span style="background:{_HTML_COLOURS[name]}">{esc(desc)}</span>'
        for name, _, desc in LEVELS
    ) + f'<span style="background:{_HTML_COLOURS["missing"]}">one side missing</span>'
    notes_html = "".join(
        f'<p class="note">({i}) {_inline(n)}</p>' for i, n in enumerate(notes, 1)
    )
    return (
        f'<div class="wide"><table class="matrix">{head}{"".join(body)}</table></div>'
        f'<p class="note legend">Each cell: the paper\'s number | ours [95% CI], then ours − '
        f"paper in percent of the paper's number, coloured by its size: {legend} "
        f"({esc(_runs_line(c.frame))}; the paper's precision).</p>{notes_html}"
        f"<details><summary>Long form, every digit (also <a href=\"tables/{esc(c.id)}.csv\">"
        f"tables/{esc(c.id)}.csv</a>)</summary>{_table_html(c)}</details>"
    )


def _figure_html(f: Figure) -> str:
    data = base64.b64encode(Path(f.png).read_bytes()).decode("ascii")
    caption = f"<strong>{html.escape(f.title)}.</strong> {_inline(f.caption)}"
    return (
        f'<figure id="{html.escape(f.id)}"><img alt="{html.escape(f.title)}" '
        f'src="data:image/png;base64,{data}"><figcaption>{caption}</figcaption></figure>'
    )


def write_report(
    path: Path,
    study: Study,
    comparisons: Sequence[Comparison | Table],
    figures: Sequence[Figure],
    *,
    quick: bool,
    failed_runs: int = 0,
    sweeps: Mapping[str, Sweep] | None = None,
    heatmaps: Mapping[str, Figure] | None = None,
) -> Path:
    """Write the study's HTML report to ``path`` and return it. ``heatmaps`` maps a
    table's id to its heatmap figure, drawn right under the table."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(study.title)} — sctpsim reproduction</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{esc(study.title)}</h1>",
        f'<p class="meta">Study <code>{esc(study.name)}</code> · paper: {_inline(study.paper)}'
        f"{' (papers/' + esc(study.paper_id) + ')' if study.paper_id else ''} · "
        f"sctpsim {esc(str(_core.__version__))}</p>",
        f"<p>{_inline(study.summary)}</p>",
    ]
    command = f"sctpsim reproduce {study.name}{' --quick' if quick else ''}"
    mode = (
        "<strong>Quick run</strong> (<code>--quick</code>): fewer replications and shorter "
        "runs than the paper; numbers are indicative. Run without <code>--quick</code> "
        "for the paper's replication count."
        if quick
        else "Full run with the paper's replication count."
    )
    parts.append(f"<p>{mode} Made with <code>{esc(command)}</code>.</p>")
    if failed_runs:
        parts.append(
            f'<p class="warn">{failed_runs} run(s) failed; the tables use the runs that '
            "succeeded. See <code>sweeps/*/runs.parquet</code> for the errors.</p>"
        )
    if sweeps:
        rows = "".join(
            f"<tr><td><code>{esc(name)}</code></td><td class=num>{len(s.points())}</td>"
            f"<td class=num>{s.replications}</td>"
            f"<td class=num>{len(s.points()) * s.replications}</td></tr>"
            for name, s in sweeps.items()
        )
        parts.append(
            "<table><tr><th>sweep</th><th>combinations</th><th>replications</th>"
            f"<th>runs</th></tr>{rows}</table>"
        )
    toc = "".join(
        f'<li><a href="#{esc(c.id)}">{esc(c.title)}</a></li>' for c in comparisons
    ) + "".join(f'<li><a href="#{esc(f.id)}">{esc(f.title)}</a></li>' for f in figures)
    parts.append(f"<nav><ul>{toc}</ul></nav>")
    parts.append(
        "<p class=note>Each table puts the paper's number beside ours: the mean over the "
        "replications, its 95% confidence interval (Student t; – with a single run or a "
        "deterministic result), n runs, and the difference ours − paper. Tables the paper "
        "prints as a matrix keep its rows and columns. Grey rows and cells are not "
        "reproduced (see their note).</p>"
    )
    for c in comparisons:
        parts.append(f'<h2 id="{esc(c.id)}">{esc(c.title)}</h2>')
        if _is_comparison(c) and getattr(c, "matrix", None) is not None:
            parts.append(_matrix_html(c))  # type: ignore[arg-type]
        else:
            parts.append(_table_html(c))
        if heatmaps and c.id in heatmaps:
            parts.append(_figure_html(heatmaps[c.id]))
        if c.text:
            parts.append(markdown_to_html(c.text, heading_offset=2))
    if figures:
        parts.append("<h2>Figures</h2>")
        parts.extend(_figure_html(f) for f in figures)
    if study.readme.is_file():
        parts.append("<h2>Set-up and assumptions (the study's README)</h2>")
        parts.append(markdown_to_html(study.readme.read_text(encoding="utf-8"), heading_offset=2))
    parts.append("</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("\n".join(parts) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
