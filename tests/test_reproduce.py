"""``sctpsim reproduce``: the bundled studies run with ``--quick`` and their outputs.

Each study runs once per session (module-scoped fixtures, two worker processes); the
tests then check what it wrote: the comparison tables (CSV that parses, every number of
the paper's ``reference.csv`` in them), the figures (PNG and SVG), and the HTML report
(self-contained, every table in it). A second run into the same directory reuses every
stored run and must write a byte-identical report.

CI runs these with the installed (non-editable) package, so they also check that the
studies ship inside the wheel.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import sctpsim
from sctpsim import cli
from sctpsim.reproduce import COMPARISON_COLUMNS, list_studies, load_study, studies_root

from pages import check_page, screenshot

#: The studies whose --quick reproduction these tests run (cmt-aqm's takes minutes; its own
#: tests are in test_cmt_aqm.py).
STUDIES = ("cc-new-stage", "failover-tuning")
ALL_STUDIES = ("cc-new-stage", "cmt-aqm", "datacenter", "failover-tuning", "wlan-handover")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sctpsim", *args], capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module", params=STUDIES)
def quick(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """Run one study with --quick (once per test session): its name and directory."""
    out = tmp_path_factory.mktemp(request.param) / "out"
    proc = run_cli("reproduce", request.param, "--quick", "--jobs", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert f"report: {out / 'report.html'}" in proc.stdout
    return request.param, out


# ------------------------------------------------------------------ listing


def test_studies_ship_inside_the_package() -> None:
    root = studies_root()
    assert root.is_dir()
    assert Path(sctpsim.__file__).resolve().parent in root.resolve().parents
    assert [s.name for s in list_studies()] == list(ALL_STUDIES)
    for study in list_studies():
        for name in ("study.toml", "reference.csv", "analysis.py", "README.md"):
            assert (study.directory / name).is_file(), (study.name, name)
        for entry in study.sweeps:
            sweep = entry.load(quick=True)  # every scenario and sweep file is there and valid
            assert sweep.replications >= 1


def test_list_shows_name_summary_and_paper(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for study in list_studies():
        assert study.name in out
    assert "Yokogawa" in out and "Elhabib" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["reproduce", "failover-tunning"],
            'unknown study "failover-tunning" (did you mean "failover-tuning"?',
        ),
        (["reproduce", "nothing-like-it"], "known studies: cc-new-stage, cmt-aqm, datacenter, failover-tuning, wlan-handover"),
        (["reproduce"], "missing study NAME"),
        (["reproduce", "--list", "cc-new-stage"], "--list takes no study name"),
    ],
)
def test_bad_study_is_one_error_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert message in err


def test_unknown_study_from_the_shell_has_no_traceback() -> None:
    proc = run_cli("reproduce", "no-such-study")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown study") and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_quick_settings_change_only_replications_and_set() -> None:
    study = load_study("failover-tuning")
    entry = next(e for e in study.sweeps if e.name == "stable-sctp")
    full, fast = entry.load(quick=False), entry.load(quick=True)
    assert full.replications == 10 and fast.replications == 2
    assert fast.scenario.resolved() != full.scenario.resolved()  # duration 60 s
    assert full.grid == fast.grid and full.zip == fast.zip


# ------------------------------------------------------------------ outputs


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    files = sorted((out / "tables").glob("*.csv"))
    assert files, "no tables written"
    return {f.stem: pd.read_csv(f, keep_default_na=False, na_values=["NaN"]) for f in files}


def test_tables_parse_and_hold_every_reference_number(quick: tuple[str, Path]) -> None:
    name, out = quick
    study = load_study(name)
    tables = _tables(out)
    comparisons = {k: t for k, t in tables.items() if "ref" in t.columns}
    assert comparisons
    for name, table in comparisons.items():
        assert list(table.columns[-len(COMPARISON_COLUMNS) :]) == list(COMPARISON_COLUMNS), name
        for column in ("paper", "ours", "ci95_low", "ci95_high", "diff", "diff_pct"):
            assert pd.api.types.is_float_dtype(table[column]), (name, column)
        # Every row we reproduce has a number; the others say why not.
        for _, row in table.iterrows():
            if math.isnan(row["ours"]):
                assert row["note"], (name, row["ref"])
            elif not math.isnan(row["paper"]):
                assert row["diff"] == pytest.approx(row["ours"] - row["paper"], rel=1e-9, abs=1e-12)
    rows = pd.concat(list(comparisons.values()), ignore_index=True)
    reference = study.reference()
    shown = rows[rows["ref"] != ""].set_index("ref")
    missing = sorted(set(reference["ref"]) - set(shown.index))
    assert not missing, f"reference numbers missing from the tables: {missing}"
    for _, ref in reference.iterrows():
        assert shown.loc[ref["ref"], "paper"] == pytest.approx(ref["value"], rel=1e-12), ref["ref"]
    # Most of the paper's numbers have a number of ours beside them.
    assert shown["ours"].notna().mean() > 0.8


def test_figures_are_png_and_svg(quick: tuple[str, Path]) -> None:
    figures = quick[1] / "figures"
    pngs = sorted(figures.glob("*.png"))
    assert len(pngs) >= 2
    for png in pngs:
        assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 10_000
        svg = png.with_suffix(".svg").read_text(encoding="utf-8")
        assert "<svg" in svg and "</svg>" in svg


def test_report_is_one_self_contained_page(quick: tuple[str, Path]) -> None:
    _, out = quick
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    # Nothing fetched from elsewhere: no external scripts, styles or images.
    assert not re.search(r"<(script|link)\b", html)
    assert not re.search(r'src="(?!data:)', html)
    images = re.findall(r'src="data:image/png;base64,', html)
    assert len(images) == len(list((out / "figures").glob("*.png")))
    for table in _tables(out):
        assert f'id="{table}"' in html, table
    assert "--quick" in html
    # The discussion of each table and the study README are in it.
    assert html.count("<h2") >= len(_tables(out)) + 1
    assert "assumptions" in html


#: The tables each study shows in its paper's shape, with the shape: (row labels,
#: column labels, rows, columns), and whether a heatmap follows.
PAPER_SHAPES: dict[str, dict[str, tuple[list[str], list[str], int, int, bool]]] = {
    "failover-tuning": {
        "table5": (["platform"], ["protocol"], 2, 3, False),
        "table6": (["PMR", "platform"], ["RTO.Max [s]"], 10, 5, True),
        "table7": (["PMR", "platform"], ["RTO.Max [s]"], 10, 5, True),
        "table8": (["platform"], ["protocol"], 2, 3, False),
        "table9": (["platform"], ["protocol"], 1, 3, False),
    },
    "cc-new-stage": {
        **{
            t: (["variant"], ["statistic"], 2, 8, False)
            for t in (
                "tables-1-2-cwnd",
                "tables-3-4-rto",
                "tables-5-6-rtt",
                "tables-7-8-e2e",
                "tables-9-10-received-bytes",
                "tables-11-12-arwnd",
            )
        },
        "section-10-totals": (["quantity", "unit"], ["variant"], 8, 2, False),
    },
}


class _Matrices(HTMLParser):
    """The matrix tables of a report: per table id, its header cells and its rows."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, list[Any]]] = {}
        self._id = ""
        self._current: dict[str, list[Any]] | None = None
        self._cell: list[str] | None = None
        self._row: list[str] = []
        self._kind = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "h2" and a.get("id"):
            self._id = str(a["id"])
        elif tag == "table" and a.get("class") == "matrix":
            self._current = self.tables.setdefault(self._id, {"head": [], "rows": [], "cells": []})
        elif self._current is not None and tag == "tr":
            self._row = []
        elif self._current is not None and tag in ("th", "td"):
            self._cell, self._kind = [], tag

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._current is None:
            return
        if tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell).strip()
            self._row.append(text)
            if self._kind == "td":
                self._current["cells"].append(text)
            self._cell = None
        elif tag == "tr":
            self._current["rows"].append(self._row)
        elif tag == "table":
            self._current = None


def test_report_tables_have_the_papers_shape(quick: tuple[str, Path]) -> None:
    name, out = quick
    html = (out / "report.html").read_text(encoding="utf-8")
    parser = _Matrices()
    parser.feed(html)
    shapes = PAPER_SHAPES[name]
    assert set(parser.tables) == set(shapes)
    for table_id, (row_names, column_names, n_rows, n_columns, heatmap) in shapes.items():
        t = parser.tables[table_id]
        head, keys, *body = t["rows"]
        assert head == [*row_names, ", ".join(column_names)], table_id
        assert len(keys) == n_columns and len(body) == n_rows, table_id
        assert len(t["cells"]) == n_rows * n_columns, table_id
        # Every cell is "paper | ours ..." and a missing side is a dash, never a zero
        # that is not in the long form.
        long = pd.read_csv(out / "tables" / f"{table_id}.csv")
        for cell in t["cells"]:
            assert " | " in cell, (table_id, cell)
        missing = sum(cell.split(" | ")[1].startswith("–") for cell in t["cells"])
        assert missing == int(long["ours"].isna().sum()), table_id
        assert (f'id="{table_id}-heatmap"' in html) == heatmap, table_id
        assert (out / "figures" / f"{table_id}-heatmap.png").is_file() == heatmap
    if name == "failover-tuning":
        t6 = parser.tables["table6"]
        assert t6["rows"][1] == ["60", "30", "10", "5", "2"]
        assert [r[0] for r in t6["rows"][2::2]] == ["5", "4", "3", "2", "1"]
        assert t6["rows"][2][1] == "ns-2" and t6["rows"][3][0] == "GINE"
        assert t6["cells"][0].startswith("66.43 | ")


def test_report_renders_in_headless_chromium(
    quick: tuple[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
    record_property: Callable[[str, object], None],
) -> None:
    from PIL import Image

    name, out = quick
    check_page(out)
    shots = tmp_path_factory.mktemp("screenshots")
    shot = screenshot(out / "report.html", shots / f"{name}-report.png", height=3000)
    print(f"\nscreenshot of the {name} report: {shot}", file=sys.stderr)
    record_property("screenshot", str(shot))
    img = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert img.shape[:2] == (3000, 1280)
    # The first table's cells are coloured by the size of the difference.
    colours = {"close": (0xD7, 0xEF, 0xD7), "fair": (0xFB, 0xF0, 0xC0), "far": (0xFB, 0xD6, 0xB0),
               "off": (0xF6, 0xBC, 0xBC)}
    painted = sum(int(np.all(np.abs(img - c) < 4, axis=2).sum()) for c in colours.values())
    assert painted > 20_000


def test_rerun_reuses_the_runs_and_writes_the_same_report(quick: tuple[str, Path]) -> None:
    name, out = quick
    before = (out / "report.html").read_bytes()
    tables = {p.name: p.read_bytes() for p in (out / "tables").glob("*.csv")}
    stored = {p.name for p in out.glob("sweeps/*/runs/*.json")}
    proc = run_cli("reproduce", name, "--quick", "--jobs", "2", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str(out)
    assert {p.name for p in out.glob("sweeps/*/runs/*.json")} == stored
    assert (out / "report.html").read_bytes() == before
    assert {p.name: p.read_bytes() for p in (out / "tables").glob("*.csv")} == tables


def test_an_interrupted_rerun_leaves_no_complete_looking_results(
    quick: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A copy of the finished study, rerun and interrupted in its second sweep: the report,
    # tables and figures of the first run are gone, so are the tables of the sweeps that
    # did not run again; the stored runs stay for the next rerun.
    import shutil

    from sctpsim import runner
    from sctpsim.reproduce import run_study

    name, finished = quick
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    stored = {p.name for p in out.glob("sweeps/*/runs/*.json")}
    assert (out / "report.html").exists() and list(out.glob("sweeps/*/summary.csv"))
    real_run_sweep = runner.run_sweep
    calls = []

    def interrupted_second(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_run_sweep(*args, **kwargs)

    monkeypatch.setattr(runner, "run_sweep", interrupted_second)
    with pytest.raises(KeyboardInterrupt):
        run_study(load_study(name), out, quick=True, jobs=1, progress=False)
    assert not (out / "report.html").exists()
    assert list(out.glob("tables/*.csv")) == []
    assert list(out.glob("figures/*.png")) + list(out.glob("figures/*.svg")) == []
    # The first sweep completed again (its tables are this run's); none of the others ran.
    first, *others = [e.name for e in load_study(name).sweeps]
    assert (out / "sweeps" / first / "summary.csv").exists()
    assert others
    for sweep in others:
        assert not (out / "sweeps" / sweep / "runs.parquet").exists()
        assert not (out / "sweeps" / sweep / "summary.csv").exists()
    assert {p.name for p in out.glob("sweeps/*/runs/*.json")} == stored


# ------------------------------------------------------------ study results


def test_failover_tuning_quick_numbers() -> None:
    """Cheap sanity checks of the model behind the study (not of the paper)."""
    study = load_study("failover-tuning")
    base = study.directory / "wifi-lte.toml"
    r = sctpsim.run_file(
        base, overrides=["apps[1].sctp.path_max_retrans=1", "apps[1].sctp.rto_max=2s"]
    )
    failover = r.scalars["sctp/upload/failover_time"]
    # Two timeouts (1 s, then 2 s) plus one LTE round trip before the T3 timer restarts.
    assert 3.0 < failover < 3.5
    assert r.scalars["sctp/upload/first_alternate_rtx_time"] == pytest.approx(1.0, abs=0.01)


def test_failover_tuning_has_cmt_columns_of_ours(quick: tuple[str, Path]) -> None:
    """Paper 004's CMT-SCTP columns (Tables 5, 8, 9) carry our numbers, and they show what
    CMT does in the model: with 1 MiB buffers (the cell) above single-path SCTP on the
    stable network and above tuned SCTP on the failing one, as in the paper; both 100 Mbit/s
    paths used at once (Table 9); and, quoted in the text, the slow LTE path's outstanding
    data blocking the Wi-Fi path with the SCTP column's 256 KiB buffers."""
    name, out = quick
    if name != "failover-tuning":
        pytest.skip("paper 004 only")
    tables = _tables(out)

    def ours(table: str, protocol: str) -> float:
        t = tables[table]
        values = t.loc[t["protocol"] == protocol, "ours"]
        assert len(values) > 0 and values.notna().all(), (table, protocol)
        return float(values.iloc[0])

    # Table 9: CMT over both paths well above one path's worth, below both links' sum.
    assert 1.5 * ours("table9", "SCTP") < ours("table9", "CMT-SCTP") < 200.0
    # Table 5: above Wi-Fi alone, below both uplinks' user-data rates (25.3 Mbit/s).
    assert ours("table5", "SCTP") < ours("table5", "CMT-SCTP") < 25.3
    # Table 8: CMT carries on over LTE after the failure (CMT-PF keeps the failed path's
    # holes from blocking it) and ends above tuned SCTP.
    assert ours("table8", "CMT-SCTP") > ours("table8", "SCTP (tuning)")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "no CMT" not in html and "not reproduced yet" not in html
    # The text quotes the 256 KiB runs: buffer-blocked, well below single-path SCTP.
    small = re.search(r"256 KiB our CMT gets\s+([0-9.]+) Mbit/s", html)
    assert small is not None and float(small.group(1)) < 0.7 * ours("table5", "SCTP")
