"""The Python API for one run: scenarios as values, overrides by key path, results, errors."""

from __future__ import annotations

import io
import math
import threading
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sctpsim
from sctpsim import Scenario, ScenarioError, _toml
from sctpsim.summary import print_summary, summary_console

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two-path-cbr.toml"

PAIR = {
    "name": "pair",
    "duration": "2s",
    "nodes": [
        {"name": "A", "interfaces": [{"address": "10.0.0.1"}]},
        {"name": "B", "interfaces": [{"address": "10.0.0.2"}]},
    ],
    "links": [{"ends": ["A/eth0", "B/eth0"], "delay": "5ms", "rate": "10Mbps"}],
    "apps": [
        {"kind": "udp-sink", "node": "B"},
        {"kind": "udp-cbr", "name": "f", "node": "A", "dst": "B", "rate": "1Mbps"},
    ],
}


def test_from_dict_runs_and_overrides_by_key_path() -> None:
    s = Scenario.from_dict(PAIR)
    r = sctpsim.run(s, seed=5)
    assert r.seed == 5 and r.name == "pair"
    slow = sctpsim.run(s.with_overrides({"links[0].delay": "50ms"}), seed=5)
    assert slow.scalar("flow", "f", "delay_min") > r.scalar("flow", "f", "delay_min") + 0.04
    # The original is unchanged; overrides accumulate on copies.
    assert s.overrides == ()
    assert s.set("duration", "3s").to_dict()["duration"] == "3s"


def test_dict_accepted_directly_and_same_as_toml() -> None:
    a = sctpsim.run(PAIR, seed=1)
    b = sctpsim.run(Scenario.from_toml(_toml.dumps(PAIR)), seed=1)
    pd.testing.assert_series_equal(a.scalars, b.scalars)


def test_load_scenario_with_overrides_matches_run_file() -> None:
    s = sctpsim.load_scenario(
        EXAMPLE, {"duration": "1s", "links[3].loss": {"model": "bernoulli", "p": 0.05}}
    )
    assert s.source == str(EXAMPLE)
    r = sctpsim.run(s, seed=2)
    f = sctpsim.run_file(
        EXAMPLE, seed=2, overrides=["duration=1s", 'links[3].loss={model="bernoulli", p=0.05}']
    )
    pd.testing.assert_series_equal(r.scalars, f.scalars)
    assert r.scalar("flow", "path2", "loss_rate") > 0.02


def test_scalars_series_with_units() -> None:
    r = sctpsim.run(EXAMPLE, seed=1, overrides={"duration": "1s"})
    flat = r.scalars
    assert isinstance(flat, pd.Series)
    assert flat["flow/path1/goodput"] == r.scalar("flow", "path1", "goodput")
    assert flat.attrs["units"]["flow/path1/goodput"] == "bit/s"
    assert flat.attrs["units"]["iface/A/eth0/utilization"] == "1"
    assert len(flat) == len(r.scalar_table)
    assert dict(flat)["flow/path1/goodput"] == flat["flow/path1/goodput"]
    table = r.scalar_table
    row = table[(table.entity == "path1") & (table.metric == "goodput")].iloc[0]
    assert (row.kind, row.value, row.unit) == ("flow", flat["flow/path1/goodput"], "bit/s")
    assert sctpsim.results.split_scalar_name("iface/A/eth0/utilization") == (
        "iface",
        "A/eth0",
        "utilization",
    )


def test_to_parquet_writes_result_files(tmp_path: Path) -> None:
    r = sctpsim.run(PAIR, seed=1)
    paths = r.to_parquet(tmp_path / "out")
    assert {p.name for p in paths} == {
        "scenario.toml",
        "scalars.csv",
        "timeseries.parquet",
        "events.parquet",
    }
    assert tomllib.loads((tmp_path / "out" / "scenario.toml").read_text())["seed"] == 1


def test_errors_carry_key_path_and_reason() -> None:
    with pytest.raises(ScenarioError) as info:
        sctpsim.run(Scenario.from_dict(PAIR).set("links[0].delay", "30 sm"))
    e = info.value
    assert e.key == "links[0].delay"
    assert e.reason == '"30 sm" is not a duration (try "30ms")'
    assert str(e) == f"{e.key}: {e.reason}"
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml('name = "x"\nduration = \n').resolved()
    assert info.value.key == "" and "TOML syntax error" in info.value.reason


def test_bad_python_values_are_type_errors() -> None:
    with pytest.raises(TypeError):
        Scenario.from_dict(PAIR).set("duration", object())
    with pytest.raises(TypeError):
        Scenario.from_dict(PAIR).with_overrides("duration=1s")  # type: ignore[arg-type]


def test_runs_in_threads_release_the_gil() -> None:
    # Not a timing test: several threads simulate at once and get the same answers
    # as sequential runs.
    s = sctpsim.load_scenario(EXAMPLE, {"duration": "2s"})
    expected = [sctpsim.run(s, seed=k).scalar("flow", "path2", "rx_packets") for k in range(4)]
    got: dict[int, float] = {}

    def work(k: int) -> None:
        got[k] = sctpsim.run(s, seed=k).scalar("flow", "path2", "rx_packets")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[k] for k in range(4)] == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("20ms", '"20ms"'),
        (0.01, "0.01"),
        (3, "3"),
        (True, "true"),
        (math.inf, "inf"),
        ('a"b\n', '"a\\"b\\n"'),
        ({"model": "bernoulli", "p": 0.5}, '{ model = "bernoulli", p = 0.5 }'),
        (["a", 1], '["a", 1]'),
    ],
)
def test_toml_literals(value: object, text: str) -> None:
    assert _toml.literal(value) == text
    assert tomllib.loads(f"v = {text}")["v"] == value


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.float64(0.01), "0.01"),
        (np.float64(0.0), "0.0"),
        (np.float32(0.5), "0.5"),
        (np.int64(3), "3"),
        (np.bool_(True), "true"),
        ([np.int64(1), {"p": np.float64(0.5)}], "[1, { p = 0.5 }]"),
    ],
)
def test_toml_literals_of_numpy_scalars(value: object, text: str) -> None:
    # numpy scalars are written as the Python numbers they stand for (np.float64 is a
    # float, but its repr is "np.float64(0.01)").
    assert _toml.literal(value) == text


def test_overrides_take_numpy_scalars() -> None:
    s = sctpsim.load_scenario(EXAMPLE).with_overrides(
        {"links[3].loss.p": np.float64(0.01), "links[1].queue.limit": np.int64(20)}
    )
    resolved = tomllib.loads(s.resolved())
    assert resolved["links"][3]["loss"]["p"] == 0.01
    assert resolved["links"][1]["queue"]["limit"] == 20


def test_sctp_results_per_association_and_stream() -> None:
    # One application uploads to two peers over two streams: each association reports under
    # <app>/assoc<k> after the first, each sink per stream, and the summary lists them.
    s = Scenario.from_dict(
        {
            "name": "two-peers",
            "duration": "10s",
            "nodes": [
                {"name": "A", "interfaces": [{"address": "10.0.0.1"}, {"address": "10.0.1.1"}]},
                {"name": "B", "interfaces": [{"address": "10.0.0.2"}]},
                {"name": "C", "interfaces": [{"address": "10.0.1.2"}]},
            ],
            "links": [
                {"ends": ["A/eth0", "B/eth0"], "delay": "5ms", "rate": "10Mbps"},
                {"ends": ["A/eth1", "C/eth0"], "delay": "5ms", "rate": "10Mbps"},
            ],
            "apps": [
                {"kind": "sctp-sink", "name": "sink-b", "node": "B"},
                {"kind": "sctp-sink", "name": "sink-c", "node": "C"},
                {
                    "kind": "sctp-bulk",
                    "name": "up",
                    "node": "A",
                    "peer": "B",
                    "more_peers": ["C"],
                    "bytes": 1_000_000,
                    "streams": 2,
                },
            ],
        }
    )
    r = sctpsim.run(s, seed=1)
    assert r.scalar("sctp", "sink-b", "delivered_bytes") == 1_000_000
    assert r.scalar("sctp", "sink-c", "delivered_bytes") == 1_000_000
    assert r.scalar("sctp", "up/assoc1", "sent_bytes") >= 1_000_000
    streams = [r.scalar("sctp", f"sink-c/stream{i}", "delivered_messages") for i in (0, 1)]
    assert all(n > 0 for n in streams)
    out = io.StringIO()
    print_summary(r, summary_console(out))
    text = out.getvalue()
    assert "up/assoc1" in text and "sink-c/stream1" in text
