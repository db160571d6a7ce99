"""Unit tests of the pure-Python result handling, against hand-built core outputs.

Nothing here runs a simulation: the dictionaries below follow the ``sctpsim._core.run``
contract (little-endian buffers, column lists), so these tests pin down decoding, the
file formats, the atomic directory writer and the summary independently of the engine.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from rich.console import Console
from sctpsim.results import (
    RESULT_FILES,
    RunResult,
    atomic_output_dir,
    write_run,
)
from sctpsim.summary import (
    format_count,
    format_ms,
    format_percent,
    format_rate,
    print_summary,
    summary_console,
)

NAN = float("nan")


def _scalars(rows: list[tuple[str, str, str, float, str]]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {"kind": [], "entity": [], "metric": [], "value": [], "unit": []}
    for row in rows:
        for name, value in zip(cols, row, strict=True):
            cols[name].append(value)
    return cols


def make_raw(*, node_drops: float = 0.0, seed: int = 42) -> dict[str, Any]:
    """A small but complete core result: two flows, two interfaces, one node."""
    scalars = _scalars(
        [
            ("run", "run", "sim_time", 2.0, "s"),
            ("run", "run", "events", 123456.0, ""),
            ("flow", "video", "tx_packets", 1000.0, ""),
            ("flow", "video", "rx_packets", 985.0, ""),
            ("flow", "video", "drops", 15.0, ""),
            ("flow", "video", "drops_queue_full", 12.0, ""),
            ("flow", "video", "drops_link_down", 3.0, ""),
            ("flow", "video", "loss_rate", 0.015, "1"),
            ("flow", "video", "goodput", 9.98e6, "bit/s"),
            ("flow", "video", "delay_mean", 0.0123456, "s"),
            ("flow", "video", "delay_p95", 0.02, "s"),
            ("flow", "video", "delay_max", 0.031, "s"),
            ("flow", "silent", "tx_packets", 10.0, ""),
            ("flow", "silent", "rx_packets", 0.0, ""),
            ("flow", "silent", "loss_rate", 1.0, "1"),
            ("flow", "silent", "goodput", 0.0, "bit/s"),
            ("flow", "silent", "delay_mean", NAN, "s"),
            ("flow", "silent", "delay_p95", NAN, "s"),
            ("flow", "silent", "delay_max", NAN, "s"),
            ("iface", "R1/eth0", "tx_packets", 2000.0, ""),
            ("iface", "R1/eth0", "utilization", 0.4567, "1"),
            ("iface", "R1/eth0", "queue_mean_packets", 3.25, ""),
            ("iface", "R1/eth0", "queue_max_packets", 64.0, ""),
            ("iface", "R1/eth0", "drops", 15.0, ""),
            ("iface", "R1/eth0", "drops_queue_full", 12.0, ""),
            ("iface", "R1/eth0", "drops_link_down", 3.0, ""),
            ("iface", "H1/eth1", "tx_packets", 0.0, ""),
            ("iface", "H1/eth1", "utilization", 0.0, "1"),
            ("iface", "H1/eth1", "queue_mean_packets", 0.0, ""),
            ("iface", "H1/eth1", "queue_max_packets", 0.0, ""),
            ("iface", "H1/eth1", "drops", 0.0, ""),
            ("node", "R2", "drops", node_drops, ""),
        ]
        + ([("node", "R2", "drops_no_route", node_drops, "")] if node_drops else [])
    )
    # Two series, interleaved in time as the core emits them.
    time_ns = [0, 0, 500_000_000, 500_000_000, 1_000_000_001]
    series = [0, 1, 0, 1, 1]
    value = [0.0, 1e6, 7.0, NAN, 2.5e6]
    n = len(time_ns)
    timeseries = {
        "time_ns": struct.pack(f"<{n}Q", *time_ns),
        "series": struct.pack(f"<{n}I", *series),
        "value": struct.pack(f"<{n}d", *value),
        "names": {
            "kind": ["iface", "flow"],
            "entity": ["R1/eth0", "video"],
            "metric": ["queue_packets", "rx_rate"],
            "unit": ["", "bit/s"],
        },
    }
    events = {
        "time_ns": struct.pack("<3Q", 0, 1_500_000_000, 2_000_000_000),
        "kind": ["fault", "drop", "fault"],
        "entity": ["L1", "R1/eth0", "L1"],
        "detail": ["link-down", "link_down", "link-up"],
    }
    return {
        "name": "unit-test",
        "seed": seed,
        "scenario": f'# Resolved\nname = "unit-test"\nduration = "2s"\nseed = {seed}\n',
        "scalars": scalars,
        "timeseries": timeseries,
        "events": events,
        "captures": ["R1-eth0.pcap"],
    }


def make_empty_raw() -> dict[str, Any]:
    return {
        "name": "empty",
        "seed": 1,
        "scenario": 'name = "empty"\n',
        "scalars": _scalars([]),
        "timeseries": {
            "time_ns": b"",
            "series": b"",
            "value": b"",
            "names": {"kind": [], "entity": [], "metric": [], "unit": []},
        },
        "events": {"time_ns": b"", "kind": [], "entity": [], "detail": []},
        "captures": [],
    }


# ------------------------------------------------------------------- decoding


def test_attributes() -> None:
    result = RunResult(make_raw())
    assert result.name == "unit-test"
    assert result.seed == 42
    assert result.scenario.startswith("# Resolved")
    assert result.captures == ["R1-eth0.pcap"]
    assert "unit-test" in repr(result)


def test_scalars_frame() -> None:
    df = RunResult(make_raw()).scalar_table
    assert list(df.columns) == ["kind", "entity", "metric", "value", "unit"]
    assert df["value"].dtype == np.float64
    assert len(df) == len(make_raw()["scalars"]["kind"])
    row = df[(df.entity == "video") & (df.metric == "goodput")].iloc[0]
    assert row["value"] == 9.98e6 and row["unit"] == "bit/s" and row["kind"] == "flow"
    assert math.isnan(df[(df.entity == "silent") & (df.metric == "delay_mean")]["value"].iloc[0])


def test_timeseries_frame_decodes_buffers() -> None:
    ts = RunResult(make_raw()).timeseries
    assert list(ts.columns) == ["time_s", "kind", "entity", "metric", "unit", "value"]
    assert ts["time_s"].dtype == np.float64 and ts["value"].dtype == np.float64
    assert ts["time_s"].tolist() == [0.0, 0.0, 0.5, 0.5, 1.000000001]
    assert ts["entity"].tolist() == ["R1/eth0", "video", "R1/eth0", "video", "video"]
    assert ts["metric"].tolist()[:2] == ["queue_packets", "rx_rate"]
    assert ts["unit"].tolist()[:2] == ["", "bit/s"]
    values = ts["value"].tolist()
    assert values[:3] == [0.0, 1e6, 7.0] and math.isnan(values[3]) and values[4] == 2.5e6


def test_timeseries_decoding_uses_little_endian() -> None:
    # The same numbers encoded big-endian must NOT decode to the same values:
    # proves the decoder does not depend on the host's byte order.
    raw = make_raw()
    raw["timeseries"]["time_ns"] = np.array([1, 2, 3, 4, 5], dtype=">u8").tobytes()
    ts = RunResult(raw).timeseries
    assert ts["time_s"].tolist() != [1e-9, 2e-9, 3e-9, 4e-9, 5e-9]
    raw["timeseries"]["time_ns"] = np.array([1, 2, 3, 4, 5], dtype="<u8").tobytes()
    assert RunResult(raw).timeseries["time_s"].tolist() == [1e-9, 2e-9, 3e-9, 4e-9, 5e-9]


def test_events_frame() -> None:
    ev = RunResult(make_raw()).events
    assert list(ev.columns) == ["time_s", "kind", "entity", "detail"]
    assert ev["time_s"].tolist() == [0.0, 1.5, 2.0]
    assert ev["detail"].tolist() == ["link-down", "link_down", "link-up"]


def test_empty_result_has_typed_empty_frames() -> None:
    result = RunResult(make_empty_raw())
    assert list(result.scalar_table.columns) == ["kind", "entity", "metric", "value", "unit"]
    assert len(result.scalar_table) == 0 and len(result.timeseries) == 0 and len(result.events) == 0
    assert result.timeseries["time_s"].dtype == np.float64
    assert list(result.events.columns) == ["time_s", "kind", "entity", "detail"]


def test_scalar_lookup() -> None:
    result = RunResult(make_raw())
    assert result.scalar("flow", "video", "goodput") == 9.98e6
    assert result.scalar("run", "run", "events") == 123456.0
    assert math.isnan(result.scalar("flow", "silent", "delay_max"))
    with pytest.raises(KeyError, match="goodput"):  # the hint lists existing metrics
        result.scalar("flow", "video", "godput")
    with pytest.raises(KeyError):
        result.scalar("flow", "nope", "goodput")
    assert math.isnan(result.scalar_or_nan("flow", "video", "drops_no_route"))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r["timeseries"].update(time_ns=r["timeseries"]["time_ns"][:-1]), "whole number"),
        (
            lambda r: r["timeseries"].update(value=r["timeseries"]["value"][:-8]),
            "different lengths",
        ),
        (
            lambda r: r["timeseries"].update(series=struct.pack("<5I", 0, 1, 0, 1, 2)),
            "out of range",
        ),
        (lambda r: r["timeseries"]["names"]["unit"].pop(), "different lengths"),
        (lambda r: r["events"]["detail"].pop(), "different lengths"),
        (lambda r: r["scalars"]["unit"].pop(), "different lengths"),
        (lambda r: r.pop("scenario"), "missing key"),
        (lambda r: r["events"].pop("kind"), "missing key"),
    ],
)
def test_malformed_results_are_rejected(mutate: Any, message: str) -> None:
    raw = make_raw()
    mutate(raw)
    with pytest.raises(ValueError, match=message):
        RunResult(raw)


# ---------------------------------------------------------------------- files


def test_to_parquet_writes_all_files_and_round_trips(tmp_path: Path) -> None:
    result = RunResult(make_raw())
    paths = result.to_parquet(tmp_path / "out")
    assert [p.name for p in paths] == list(RESULT_FILES)
    out = tmp_path / "out"
    assert (out / "scenario.toml").read_text(encoding="utf-8") == result.scenario

    csv = pd.read_csv(out / "scalars.csv", keep_default_na=False, na_values=["NaN"])
    assert list(csv.columns) == ["kind", "entity", "metric", "value", "unit"]
    assert csv["value"].tolist()[:3] == [2.0, 123456.0, 1000.0]
    assert math.isnan(csv[(csv.entity == "silent") & (csv.metric == "delay_p95")]["value"].iloc[0])
    assert (out / "scalars.csv").read_bytes().count(b"\r") == 0

    ts = pd.read_parquet(out / "timeseries.parquet")
    assert list(ts.columns) == ["time_s", "kind", "entity", "metric", "unit", "value"]
    pd.testing.assert_frame_equal(
        ts.astype({c: object for c in ("kind", "entity", "metric", "unit")}),
        result.timeseries.astype({c: object for c in ("kind", "entity", "metric", "unit")}),
    )
    ev = pd.read_parquet(out / "events.parquet")
    assert ev["detail"].tolist() == result.events["detail"].tolist()
    assert ev["time_s"].tolist() == result.events["time_s"].tolist()

    # No pandas index column and no pandas metadata (it would embed the pandas version).
    schema = pq.read_schema(out / "timeseries.parquet")
    assert schema.names == ["time_s", "kind", "entity", "metric", "unit", "value"]
    assert not schema.metadata or b"pandas" not in schema.metadata


def test_to_parquet_is_byte_deterministic(tmp_path: Path) -> None:
    # Two independently built results with the same content => identical bytes.
    RunResult(make_raw()).to_parquet(tmp_path / "a")
    RunResult(make_raw()).to_parquet(tmp_path / "b")
    for name in RESULT_FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    # ...and different content gives different bytes (the check above is not vacuous).
    RunResult(make_raw(seed=43)).to_parquet(tmp_path / "c")
    assert (tmp_path / "c" / "scenario.toml").read_bytes() != (
        tmp_path / "a" / "scenario.toml"
    ).read_bytes()


def test_empty_result_writes_files(tmp_path: Path) -> None:
    RunResult(make_empty_raw()).to_parquet(tmp_path)
    assert len(pd.read_parquet(tmp_path / "timeseries.parquet")) == 0
    assert (tmp_path / "scalars.csv").read_text() == "kind,entity,metric,value,unit\n"


# ------------------------------------------------------------ atomic writing


def _hidden_leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_atomic_dir_success(tmp_path: Path) -> None:
    dest = tmp_path / "results" / "run1"
    with atomic_output_dir(dest) as staging:
        # Work happens in a hidden sibling, invisible under the final name.
        assert staging.parent == dest.parent and staging.name.startswith(".run1.partial-")
        assert not dest.exists()
        RunResult(make_raw()).to_parquet(staging)
        (staging / "R1-eth0.pcap").write_bytes(b"pcap")
    assert sorted(p.name for p in dest.iterdir()) == sorted([*RESULT_FILES, "R1-eth0.pcap"])
    assert _hidden_leftovers(dest.parent) == []


def test_atomic_dir_removes_staging_of_killed_runs_only(tmp_path: Path) -> None:
    dest = tmp_path / "run1"
    # A process killed with SIGKILL leaves its staging directory behind.
    killed = subprocess.Popen([sys.executable, "-c", "pass"])
    killed.wait()
    dead = tmp_path / f".run1.partial-{killed.pid}"
    (dead / "sub").mkdir(parents=True)
    dead_old = tmp_path / f".run1.old-{killed.pid}"
    dead_old.mkdir()
    # A live process (our parent) may be writing its own: left alone, as are other names.
    live = tmp_path / f".run1.partial-{os.getppid()}"
    live.mkdir()
    other = tmp_path / f".run10.partial-{killed.pid}"
    other.mkdir()
    write_run(RunResult(make_raw()), dest)
    assert _hidden_leftovers(tmp_path) == sorted([live.name, other.name])


def test_atomic_dir_replaces_previous_result(tmp_path: Path) -> None:
    dest = tmp_path / "run"
    write_run(RunResult(make_raw(seed=1)), dest)
    (dest / "stale.pcap").write_bytes(b"old")
    write_run(RunResult(make_raw(seed=2)), dest)
    assert "seed = 2" in (dest / "scenario.toml").read_text()
    assert not (dest / "stale.pcap").exists()  # replaced, not merged
    assert _hidden_leftovers(tmp_path) == []


def test_atomic_dir_replaces_empty_directory(tmp_path: Path) -> None:
    dest = tmp_path / "run"
    dest.mkdir()
    write_run(RunResult(make_raw()), dest)
    assert (dest / "scenario.toml").is_file()


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()])
def test_atomic_dir_failure_leaves_nothing(tmp_path: Path, exc: BaseException) -> None:
    dest = tmp_path / "run"
    with pytest.raises(type(exc)), atomic_output_dir(dest) as staging:
        (staging / "scenario.toml").write_text("half")
        raise exc
    assert not dest.exists()
    assert _hidden_leftovers(tmp_path) == []


def test_atomic_dir_failure_keeps_previous_result(tmp_path: Path) -> None:
    dest = tmp_path / "run"
    write_run(RunResult(make_raw(seed=1)), dest)
    before = {p.name: p.read_bytes() for p in dest.iterdir()}
    with pytest.raises(KeyboardInterrupt), atomic_output_dir(dest) as staging:
        RunResult(make_raw(seed=2)).to_parquet(staging)
        raise KeyboardInterrupt
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == before
    assert _hidden_leftovers(tmp_path) == []


def test_atomic_dir_refuses_to_replace_unrelated_directory(tmp_path: Path) -> None:
    dest = tmp_path / "precious"
    dest.mkdir()
    (dest / "thesis.tex").write_text("years of work")
    with pytest.raises(FileExistsError), atomic_output_dir(dest):
        pytest.fail("must not get here")  # pragma: no cover
    assert (dest / "thesis.tex").read_text() == "years of work"
    assert _hidden_leftovers(tmp_path) == []


@pytest.mark.parametrize("extra", ["notes.txt", "data/", "figure-1.png.bak"])
def test_atomic_dir_refuses_a_directory_with_a_scenario_and_other_files(
    tmp_path: Path, extra: str
) -> None:
    # A user's own directory holding their scenario.toml (`sctpsim run scenario.toml --out .`)
    # and anything sctpsim does not write there is not a previous run.
    dest = tmp_path / "project"
    dest.mkdir()
    (dest / "scenario.toml").write_text('name = "mine"')
    if extra.endswith("/"):
        (dest / extra).mkdir()
    else:
        (dest / extra).write_text("mine")
    before = sorted(p.name for p in dest.iterdir())
    with pytest.raises(FileExistsError):
        write_run(RunResult(make_raw()), dest)
    assert sorted(p.name for p in dest.iterdir()) == before
    assert (dest / "scenario.toml").read_text() == 'name = "mine"'


def test_atomic_dir_refuses_to_replace_a_file(tmp_path: Path) -> None:
    dest = tmp_path / "file"
    dest.write_text("x")
    with pytest.raises(FileExistsError):
        write_run(RunResult(make_raw()), dest)
    assert dest.read_text() == "x"


# -------------------------------------------------------------------- summary


def render(result: RunResult) -> str:
    buffer = io.StringIO()
    print_summary(result, Console(file=buffer, width=120, color_system=None))
    return buffer.getvalue()


def test_summary_contents() -> None:
    text = render(RunResult(make_raw()))
    first = text.splitlines()[0]
    assert "unit-test" in first and "seed 42" in first
    assert "simulated 2 s" in first and "123,456 events" in first
    assert "Flows" in text and "Interfaces (transmit side)" in text
    assert "9.98 Mbit/s" in text
    assert "1.50 %" in text  # video loss rate
    assert "12.346" in text  # video mean delay in ms
    assert "queue_full=12, link_down=3" in text
    assert "45.7 %" in text  # utilization
    assert "Node drops" not in text  # no node dropped anything


def test_summary_shows_node_drops_when_present() -> None:
    text = render(RunResult(make_raw(node_drops=4)))
    assert "Node drops" in text and "no_route=4" in text


def test_summary_skips_empty_tables() -> None:
    text = render(RunResult(make_empty_raw()))
    assert "empty" in text
    assert "Flows" not in text and "Interfaces" not in text


def test_summary_console_off_a_terminal_has_fixed_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    console = summary_console(io.StringIO())
    assert console.width == 120 and not console.is_terminal


@pytest.mark.parametrize(
    ("bits", "text"),
    [
        (9.98e6, "9.98 Mbit/s"),
        (0.0, "0 bit/s"),
        (512.0, "512 bit/s"),
        (64e3, "64.0 kbit/s"),
        (999.9e3, "1.00 Mbit/s"),
        (1.5e9, "1.50 Gbit/s"),
        (NAN, "-"),
    ],
)
def test_format_rate(bits: float, text: str) -> None:
    assert format_rate(bits) == text


def test_other_formatters() -> None:
    assert format_percent(0.01234) == "1.23 %"
    assert format_percent(NAN) == "-"
    assert format_ms(0.0123456) == "12.346"
    assert format_ms(NAN) == "-"
    assert format_count(1234567.0) == "1,234,567"
    assert format_count(NAN) == "-"
