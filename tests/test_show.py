"""The page of one run (``sctpsim show``, ``sctpsim run --report``), its figures, the
envelope downsampling they rely on, and the SCTP packet log (``record.packets``)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import sctpsim
from sctpsim import cli
from sctpsim.envelope import envelope, max_points
from sctpsim.results import PACKETS_FILE, RunResult
from sctpsim.runreport import changed_keys

from pages import check_page, screenshot

ROOT = Path(__file__).resolve().parent.parent
FAILOVER = ROOT / "examples" / "failover.toml"
#: The failover example cut short: the break at 10 s, T3 expiries at 11, 13, 17 s.
SHORT = ["duration=20s", "record.packets=true"]


# ------------------------------------------------------------------- envelope


def _brute_force_extremes(x: np.ndarray, y: np.ndarray, columns: int) -> set[tuple[float, float]]:
    lo, hi = x[0], x[-1]
    col = np.clip(((x - lo) / (hi - lo) * columns).astype(int), 0, columns - 1)
    out = set()
    for c in np.unique(col):
        ys = y[col == c]
        out.add(float(ys.min()))
        out.add(float(ys.max()))
    return out


def test_envelope_keeps_every_columns_extremes_and_bounds_the_points() -> None:
    rng = np.random.default_rng(7)
    x = np.sort(rng.uniform(0, 300, 200_000))
    y = np.cumsum(rng.normal(size=x.size))
    y[12_345] = 1e6  # a one-sample spike
    y[150_000] = -1e6  # and a dip
    columns = 700
    ex, ey = envelope(x, y, columns)
    assert len(ex) <= max_points(columns) == 1400
    assert np.all(np.diff(ex) >= 0), "points stay in time order"
    assert ey.max() == 1e6 and ey.min() == -1e6
    # Every column's minimum and maximum is drawn, at its own time.
    assert set(ey.tolist()) == _brute_force_extremes(x, y, columns)
    picked = dict(zip(ey.tolist(), ex.tolist(), strict=False))
    assert picked[1e6] == x[12_345] and picked[-1e6] == x[150_000]


def test_envelope_leaves_short_data_alone_drops_nan_and_clips_to_the_range() -> None:
    x = np.arange(10.0)
    y = np.array([1, 2, np.nan, 4, 5, 6, 7, 8, 9, 10], dtype=float)
    ex, ey = envelope(x, y, 100)
    assert ex.tolist() == [0, 1, 3, 4, 5, 6, 7, 8, 9] and not np.isnan(ey).any()
    # Two columns over [0, 4]: samples beyond the range fall into the last column.
    ex, ey = envelope(np.arange(10.0), np.arange(10.0), 2, x_range=(0.0, 4.0))
    assert ey.tolist() == [0.0, 1.0, 2.0, 9.0]
    with pytest.raises(ValueError):
        envelope(np.arange(3.0), np.arange(4.0), 10)


# ---------------------------------------------------------------- packet log


@pytest.fixture(scope="module")
def failover() -> RunResult:
    return sctpsim.run_file(FAILOVER, overrides=SHORT)


def test_packet_log_columns_and_counts(failover: RunResult) -> None:
    p = failover.packets
    assert p is not None and failover.has_packets
    assert list(p.columns) == [
        "time_s", "association", "path", "kind", "tsn", "retransmission", "length", "a_rwnd", "highest_tsn",
    ]
    assert str(p["association"].dtype) == "category" and str(p["kind"].dtype) == "category"
    assert (p["tsn"].dtype, p["path"].dtype, p["retransmission"].dtype) == (np.uint32, np.int32, bool)
    data = p[p["kind"] == "data"]
    rtx = int(data["retransmission"].sum())
    s = failover.scalars
    assert rtx == s["sctp/upload/fast_retransmissions"] + s["sctp/upload/timeout_retransmissions"] > 0
    assert data.loc[~data["retransmission"], "length"].sum() == s["sctp/upload/sent_bytes"]
    # The first retransmission on the alternate path (path 1) is the failover scalars' instant.
    first = data[(data["path"] == 1) & data["retransmission"]]["time_s"].iloc[0]
    assert first == pytest.approx(s["sctp/upload/primary_break_at"] + s["sctp/upload/first_alternate_rtx_time"])


def test_a_run_directory_reads_back_and_writes_the_same_bytes(failover: RunResult, tmp_path: Path) -> None:
    first = failover.to_parquet(tmp_path / "a")
    assert (tmp_path / "a" / PACKETS_FILE) in first
    again = RunResult.load(tmp_path / "a")
    assert again.scalars.equals(failover.scalars)
    second = again.to_parquet(tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_without_the_key_there_is_no_packet_file(tmp_path: Path) -> None:
    r = sctpsim.run_file(FAILOVER, overrides=["duration=2s"])
    assert r.packets is None and not r.has_packets
    written = r.to_parquet(tmp_path)
    assert PACKETS_FILE not in {p.name for p in written}
    assert "packets" not in r.scenario


# ---------------------------------------------------------------------- figures


def _points(fig) -> list[int]:  # noqa: ANN001
    return [len(line.get_xdata()) for ax in fig.axes for line in ax.get_lines()]


def test_figures_draw_at_most_two_points_per_pixel_column(failover: RunResult) -> None:
    width = 600
    for fig in (
        failover.paths(width=width),
        failover.flows(width=width),
        failover.queues(width=width),
        failover.sequence(width=width),
    ):
        w, h = fig.get_size_inches() * fig.dpi
        assert w == width
        points = _points(fig)
        assert points and max(points) <= max_points(width) + 2 * width  # a NaN break at most per column
        assert sum(points) < w * h
    # The packet log has far more rows than the sequence graph draws.
    assert len(failover.packets) > 3 * sum(_points(failover.sequence(width=width)))


def test_sequence_graph_needs_the_packet_log() -> None:
    from sctpsim.runplots import NotRecorded

    r = sctpsim.run_file(FAILOVER, overrides=["duration=2s"])
    with pytest.raises(NotRecorded, match="record.packets"):
        r.sequence()
    with pytest.raises(KeyError, match="known: upload"):
        r.paths("nobody")


def test_tcp_connections_get_their_own_figure() -> None:
    r = sctpsim.run_file(ROOT / "examples" / "tcp-dumbbell.toml", overrides=["duration=3s"])
    from sctpsim.runplots import SeriesIndex, tcp_names

    names = tcp_names(SeriesIndex(r))
    assert names
    fig = r.paths(names[0])
    assert fig.texts[0].get_text() == f"TCP connection {names[0]}"


def test_crowded_runs_draw_the_busiest_and_name_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sctpsim import runreport
    from sctpsim.runplots import queued_interfaces

    r = sctpsim.run_file(ROOT / "examples" / "tcp-dumbbell.toml", overrides=["duration=3s"])
    ifaces = queued_interfaces(r)
    assert len(ifaces) > 3
    fig = r.queues(limit=3)
    drawn = [line.get_label() for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert len(drawn) == 3 and f"{len(ifaces) - 3} more not drawn" in fig.texts[0].get_text()
    # The interface that dropped most is among them.
    most = max(ifaces, key=lambda i: r.scalar_or_nan("iface", i, "drops"))
    assert any(d.startswith(most) for d in drawn)
    monkeypatch.setattr(runreport, "MAX_PER_KIND", 2)
    r.to_parquet(tmp_path)
    page = runreport.write_run_report(tmp_path, r)
    assert sum("TCP connection" in title for title, _, _ in page.figures) == 2
    assert any("more TCP connections" in note for note in page.not_recorded)


def test_changed_keys_lists_what_the_file_sets_and_not_the_defaults() -> None:
    resolved = sctpsim.load_scenario(FAILOVER).resolved()
    keys = dict(changed_keys(resolved))
    assert keys["faults[0].target"] == "R1-B" and keys["links[1].delay"] == "5ms"
    assert keys["record.events"] == ["fault", "sctp"]
    # Equal to the default, or derived by the simulator: not listed.
    for absent in ("record.interval", "links[1].queue.limit", "links[0].name", "links[0].mtu", "apps[1].port"):
        assert absent not in keys, absent
    changed = dict(changed_keys(sctpsim.load_scenario(FAILOVER, {"links[0].name": "first"}).resolved()))
    assert changed["links[0].name"] == "first"


# ------------------------------------------------------------------------ page


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("show") / "failover"
    assert cli.main(["run", str(FAILOVER), "--out", str(out), "-q", "--set", "record.packets=true"]) == 0
    assert cli.main(["show", str(out)]) == 0
    return out


def test_show_writes_a_self_contained_page_with_every_figure(shown: Path) -> None:
    page = check_page(shown)
    assert len(page.images) == 4  # paths, goodput, queues, sequence
    names = sorted(p.name for p in shown.glob("figure-*"))
    assert names == [
        f"figure-{n}.{ext}" for n in ("goodput", "paths-upload", "queues", "sequence-upload") for ext in ("png", "svg")
    ]
    text = (shown / "report.html").read_text(encoding="utf-8")
    assert "<h1>failover</h1>" in text and "seed 1" in text
    for table in ("SCTP failover", "SCTP paths", "Interfaces"):
        assert table in text
    # What the run did not record, and how to record it.
    assert 'record.events does not include &quot;drop&quot;' in text
    assert "packet log is off" not in text
    assert os.path.getsize(shown / "report.html") < 2_000_000


def test_show_is_deterministic(shown: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(shown, copy)
    assert cli.main(["show", str(copy)]) == 0
    for f in sorted(shown.glob("figure-*")) + [shown / "report.html"]:
        assert hashlib.sha256(f.read_bytes()).digest() == hashlib.sha256((copy / f.name).read_bytes()).digest(), f.name


def test_run_report_writes_the_page_and_leaves_the_results_alone(tmp_path: Path) -> None:
    plain, reported = tmp_path / "plain", tmp_path / "reported"
    args = ["run", str(FAILOVER), "-q", "--set", "duration=15s", "--set", "record.interval=0s"]
    assert cli.main([*args, "--out", str(plain)]) == 0
    assert cli.main([*args, "--out", str(reported), "--report"]) == 0
    for f in plain.iterdir():
        assert f.read_bytes() == (reported / f.name).read_bytes(), f.name
    text = (reported / "report.html").read_text(encoding="utf-8")
    # No time series and no packet log: the page says what to set.
    assert "record.interval is 0" in text and "set record.packets = true" in text
    assert not list(reported.glob("figure-*"))


def test_show_refuses_what_is_not_a_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["show", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("scalars", "scalars.csv: not a run's scalars table (no column kind; it has: a, b)"),
        ("events", "events.parquet: no such file (not a complete run directory)"),
        ("timeseries", "timeseries.parquet: no such file (not a complete run directory)"),
    ],
)
def test_show_names_a_damaged_or_missing_result_file(
    shown: Path, tmp_path: Path, damage: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(shown, run)
    if damage == "scalars":
        (run / "scalars.csv").write_text("a,b\n", encoding="utf-8")
    else:
        (run / f"{damage}.parquet").unlink()
    assert cli.main(["show", str(run)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {run}: {message}\n"


def test_the_page_of_a_long_run_stays_small_and_quick(tmp_path: Path) -> None:
    """The 300-s failover-tuning run with every record option on: 340,000 packet-log rows,
    time series every 100 ms. The figures draw envelopes, so the page stays small and is
    written in about a second (bounded loosely here: the machine may be busy)."""
    import time

    scenario = ROOT / "python" / "sctpsim" / "studies" / "failover-tuning" / "wifi-lte.toml"
    out = tmp_path / "long"
    args = ["--set", "record.packets=true", "--set", "record.interval=100ms",
            "--set", 'record.events=["fault", "sctp", "drop"]']
    assert cli.main(["run", str(scenario), "--out", str(out), "-q", *args]) == 0
    result = RunResult.load(out)
    assert len(result.packets) > 300_000
    start = time.process_time()
    page = sctpsim.write_run_report(out, result)
    spent = time.process_time() - start
    print(f"\n300-s run: page {page.html.stat().st_size:,} bytes in {spent:.2f} s CPU", file=sys.stderr)
    assert page.html.stat().st_size < 2_000_000
    assert spent < 6.0
    check_page(out)


# ------------------------------------------------------------ headless browser


def test_page_renders_in_headless_chromium(
    shown: Path, tmp_path_factory: pytest.TempPathFactory, record_property: Callable[[str, object], None]
) -> None:
    from PIL import Image

    shots = tmp_path_factory.mktemp("screenshots")
    shot = screenshot(shown / "report.html", shots / "failover-report.png", height=4000)
    # Kept as a test artefact: pytest's temporary directories outlive the run (the last
    # three are kept), and the path goes into the JUnit report.
    print(f"\nscreenshot of report.html: {shot}", file=sys.stderr)
    record_property("screenshot", str(shot))
    img = np.asarray(Image.open(shot).convert("RGB"))
    assert img.shape[:2] == (4000, 1280)
    # The figures were drawn: rows well down the page hold the plots' colours (matplotlib's
    # C0 blue and C1 orange), not just text on white.
    blue = np.all(np.abs(img.astype(int) - [31, 119, 180]) < 30, axis=2)
    orange = np.all(np.abs(img.astype(int) - [255, 127, 14]) < 30, axis=2)
    assert blue.sum() > 500 and orange.sum() > 500
    assert (img.reshape(-1, 3).std(axis=0) > 10).all()


# -------------------------------------------------------------------- example


def test_run_figures_notebook_example_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "run_figures.py"), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("paths.png", "sequence.png", "flows.png", "queues.png", "report.html", PACKETS_FILE):
        assert (tmp_path / "out" / name).is_file(), name


def test_show_names_an_empty_scalars_file(
    shown: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(shown, run)
    (run / "scalars.csv").write_text("", encoding="utf-8")
    assert cli.main(["show", str(run)]) == 2
    assert capsys.readouterr().err == (
        f"error: {run}: scalars.csv: not a run's scalars table (no column kind; it has: none)\n"
    )


def test_loading_a_damaged_run_is_a_value_error(shown: Path, tmp_path: Path) -> None:
    # RunResult.load's contract: ValueError for a file that does not hold what it should.
    run = tmp_path / "run"
    shutil.copytree(shown, run)
    (run / "scalars.csv").write_text("a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^scalars\.csv: not a run's scalars table"):
        sctpsim.RunResult.load(run)
