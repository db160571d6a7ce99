"""Reports of a reproduction: the comparison tables on the console and one HTML file.

:func:`write_report` writes a single self-contained HTML page (the figures are embedded
as PNG data, the style is inline, nothing is fetched), so it opens offline and can be
mailed as one file. The page has no date or timing in it: the same results give the same
bytes. :func:`print_comparisons` prints the same tables with rich.

Texts (the study README, the discussion under each table) are a small Markdown subset:
headings, paragraphs, ``-`` lists, pipe tables, ``code``, **bold**, *italics* and
``[links](url)``.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sctpsim import _core

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from sctpsim.reproduce import Comparison, Figure, Study, Table
    from sctpsim.sweep import Sweep

__all__ = ["format_number", "markdown_to_html", "print_comparisons", "write_report"]


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


# ----------------------------------------------------------------- console


def print_comparisons(console: Console, comparisons: Sequence[Comparison | Table]) -> None:
    """Print each comparison table with its notes and discussion."""
    from rich.markdown import Markdown
    from rich.markup import escape
    from rich.table import Table

    for c in comparisons:
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
"""


def _inline(text: str) -> str:
    """Inline Markdown: code spans, links, bold, italics (text is escaped first)."""
    parts = re.split(r"(`[^`]*`)", text)
    out: list[str] = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) >= 2:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        s = html.escape(part)
        s = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', s)
        s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
        s = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", s)
        out.append(s)
    return "".join(out)


def markdown_to_html(text: str, heading_offset: int = 0) -> str:
    """The Markdown subset of the module docs as HTML."""
    out: list[str] = []
    blocks = re.split(r"\n\s*\n", text.strip())
    for block in blocks:
        lines = block.splitlines()
        if not lines:
            continue
        first = lines[0]
        m = re.match(r"(#{1,6})\s+(.*)", first)
        if m and len(lines) == 1:
            level = min(6, len(m.group(1)) + heading_offset)
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
            continue
        if m:  # a heading followed by text in the same block
            level = min(6, len(m.group(1)) + heading_offset)
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
            lines = lines[1:]
            first = lines[0]
        if first.startswith("```"):
            body = "\n".join(line for line in lines[1:] if not line.startswith("```"))
            out.append(f"<pre><code>{html.escape(body)}</code></pre>")
        elif all(line.strip().startswith("|") for line in lines) and len(lines) >= 2:
            out.append(_md_table(lines))
        elif all(re.match(r"\s*[-*] ", line) or line.startswith("  ") for line in lines):
            items: list[str] = []
            for line in lines:
                if re.match(r"\s*[-*] ", line):
                    items.append(re.sub(r"^\s*[-*] ", "", line))
                else:
                    items[-1] += " " + line.strip()
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
        else:
            out.append(f"<p>{_inline(' '.join(line.strip() for line in lines))}</p>")
    return "\n".join(out)


def _md_table(lines: list[str]) -> str:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    body = [r for r in rows[1:] if not all(re.fullmatch(r":?-{2,}:?", c) for c in r)]
    head = "".join(f"<th>{_inline(c)}</th>" for c in rows[0])
    cells = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body)
    return f"<table><tr>{head}</tr>{cells}</table>"


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
) -> Path:
    """Write the study's HTML report to ``path`` and return it."""
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
        "deterministic result), n runs, and the difference ours − paper. Grey rows are not "
        "reproduced (see their note).</p>"
    )
    for c in comparisons:
        parts.append(f'<h2 id="{esc(c.id)}">{esc(c.title)}</h2>')
        parts.append(_table_html(c))
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
