"""The peer benchmark against ns-2.35 (benches/peers): that both sides of each scenario
configure the same network and TCP, the harness's parsing of both tools' outputs, and,
where ns-2 is installed, its timing hooks. No timing is asserted."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from scripts import ROOT, load_script

HERE = ROOT / "benches" / "peers"


run = load_script(HERE / "run.py", "peers_run")
needs_ns = pytest.mark.skipif(shutil.which("ns") is None,
                              reason="ns-2 not installed (apt-get install ns2, or run benches/peers/run.py)")


@pytest.mark.parametrize("scenario", ["wifi-lte", "tcp-dumbbell-30"])
def test_both_sides_configure_the_same_links(scenario: str) -> None:
    rows = run.link_table(scenario)
    assert len(rows) == len(run.LINK_MAP[scenario])
    for ours_name, ns2_name, ours, theirs in rows:
        assert ours is not None, f"sctpsim has no link {ours_name}"
        assert theirs is not None, f"ns-2 has no link {ns2_name}"
        rate, delay, queue = ours
        assert theirs[0] == pytest.approx(rate), (ours_name, ns2_name)
        assert theirs[1] == pytest.approx(delay), (ours_name, ns2_name)
        assert theirs[2] == queue, (ours_name, ns2_name)
    # The table covers every link of the sctpsim scenario, both directions.
    toml = run.STUDY_TOML if scenario == "wifi-lte" else HERE / f"{scenario}.toml"
    assert {(n, d) for n, d, _, _ in run.LINK_MAP[scenario]} == set(run.sctpsim_links(toml))


def test_the_asymmetric_wifi_and_lte_rates_are_read_per_direction() -> None:
    rows = {name: ours for name, _, ours, _ in run.link_table("wifi-lte")}
    assert rows["wifi fwd"][0] == pytest.approx(20.79e6) and rows["wifi rev"][0] == pytest.approx(21.58e6)
    assert rows["lte fwd"][:2] == pytest.approx((5.40e6, 0.1292))
    assert rows["lte rev"][0] == pytest.approx(10.79e6)


def test_tcp_parameters_match() -> None:
    doc = tomllib.loads((HERE / "tcp-dumbbell-30.toml").read_text())
    group = doc["groups"][0]
    tcp = group["tcp"]
    tcl = (HERE / "tcp-dumbbell-30.tcl").read_text()

    def ns2(name: str) -> float:
        m = re.search(rf"^Agent/TCP\S* set {name} (\S+)", tcl, re.M)
        assert m, name
        value = m.group(1)
        return float(re.search(rf"^set {value[1:]} (\S+)", tcl, re.M).group(1)) if value.startswith("$") \
            else float(value)

    assert tcp["cc"] == "newreno" and "Agent/TCP/Newreno" in tcl and "Agent/TCPSink/DelAck" in tcl
    assert not tcp["sack"] and not tcp["timestamps"]
    assert ns2("packetSize_") == tcp["mss"]
    assert ns2("windowInit_") == tcp["initial_window"]
    assert ns2("rtxcur_init_") == run.delay_s(tcp["initial_rto"])
    assert ns2("minrto_") == run.delay_s(tcp["min_rto"])
    assert ns2("maxrto_") == run.delay_s(tcp["max_rto"])
    assert ns2("interval_") == run.delay_s(tcp["delayed_ack"])
    # ns-2's window_ in segments covers the receive buffer.
    assert ns2("window_") * tcp["mss"] <= 1024 * 1024 < (ns2("window_") + 1) * tcp["mss"]
    assert int(re.search(r"^set flows (\d+)", tcl, re.M).group(1)) == group["count"] == 30
    assert float(re.search(r"^set duration (\S+)", tcl, re.M).group(1)) == run.delay_s(doc["duration"])


def test_sctp_parameters_match_the_study_scenario() -> None:
    doc = tomllib.loads(run.STUDY_TOML.read_text())
    tcl = (HERE / "wifi-lte.tcl").read_text()
    upload = next(a for a in doc["apps"] if a["kind"] == "sctp-bulk")
    assert upload["sctp"]["preset"] == "rfc4960" and upload["primary"] == "server/eth0"
    # rfc4960 preset: RTO.Initial 3 s, 256 KiB buffers (as README.md's mapping says).
    for agent in ("snd", "rcv"):
        assert re.search(rf"configure_sctp_agent \${agent} 262144 3.0", tcl), agent
    assert "set-primary-destination $server_if0" in tcl
    assert run.delay_s(doc["duration"]) == 300.0 and '$ns at 300.0 "finish"' in tcl
    assert run.delay_s(doc["faults"][0]["at"]) == run.FAILURE_AT and "rtmodel-at 100.0 down" in tcl
    assert run.delay_s(upload["start"]) == run.APP_START and '$ns at 0.5 "$ftp start"' in tcl


def test_timing_lines_are_parsed() -> None:
    out = "warning: something\nsim-start 1000000\nsim-end 3500000\n"
    assert run.ns2_sim_seconds(out) == pytest.approx(2.5)
    with pytest.raises(ValueError):
        run.ns2_sim_seconds("sim-start 1\n")
    assert run.sctpsim_sim_seconds("x\nsctpsim-core-run 0.125000\n") == pytest.approx(0.125)
    with pytest.raises(ValueError):
        run.sctpsim_sim_seconds("")


def test_ns2_trace_measures_retransmissions_arrivals_and_drops() -> None:
    nodes = {"client_if0": 1, "client_if1": 2, "server_if0": 4, "server_if1": 5}
    lines = [
        "+ 0.5 1 6 sctp 56 -------I 0 1.0 4.0 1 -1 4 65535 65535",
        "+ 1.0 1 6 sctp 1500 -------D 0 1.0 4.0 1 10 100 0 1",
        "+ 1.0 1 6 sctp 1500 -------D 0 1.0 4.0 1 11 101 0 2",
        "d 1.1 1 6 sctp 1500 -------D 0 1.0 4.0 1 11 101 0 2",
        "r 1.2 6 4 sctp 1500 -------D 0 1.0 4.0 1 10 100 0 1",
        "+ 2.0 2 7 sctp 1500 -------D 0 2.0 5.0 1 11 105 0 2",
        "r 2.3 7 5 sctp 1500 -------D 0 2.0 5.0 1 11 105 0 2",
        "r 2.4 7 5 sctp 1500 -------D 0 2.0 5.0 1 11 106 0 2",
        "+ 2.5 2 7 sctp 1500 -------D 0 2.0 5.0 1 12 107 0 3",
    ]
    t = run.parse_ns2_trace_sctp(lines, nodes)
    assert t["received"] == 2 and t["last_arrival"] == pytest.approx(2.3)
    assert t["retransmitted"] == {0: 0, 1: 1}
    assert t["sends"] == {0: [(1.0, 10), (1.0, 11)], 1: [(2.0, 11), (2.5, 12)]}
    assert t["drops"] == 1


def test_results_table_flags_differences_above_five_percent() -> None:
    s = run.SCENARIOS[0]
    lines = run.results_table(s, {"a": 100.0, "b": 100.0, "c": 0.0}, {"a": 104.0, "b": 110.0, "c": 2.0})
    body = "\n".join(lines)
    assert "| a | 100 | 104 | +4.0 % |" in body
    assert "| b | 100 | 110 | +10.0 % **>5 %** |" in body
    assert "| c | 0.000 | 2.000 | +2 |" in body
    assert run.jain([1.0, 1.0]) == pytest.approx(1.0) and run.jain([1.0, 0.0]) == pytest.approx(0.5)


def test_sctpsim_timed_reports_the_core_run(tmp_path: Path) -> None:
    s = run.Scenario("tiny", "", "", (), HERE / "tcp-dumbbell-30.toml", ("duration=1s",))
    wall, rss, _, err = run.timed(run.sctpsim_command(s, tmp_path / "out"))
    sim = run.sctpsim_sim_seconds(err)
    assert 0 < sim < wall and rss > 1
    assert (tmp_path / "out" / "scalars.csv").exists()


@needs_ns
def test_ns2_scripts_run_and_report_their_simulation_time(tmp_path: Path) -> None:
    # The TCP dumbbell for 60 simulated seconds takes about 0.5 s of ns-2.
    wall, rss, out, _ = run.timed(["ns", str(HERE / "tcp-dumbbell-30.tcl"), str(tmp_path), "trace"])
    assert 0 < run.ns2_sim_seconds(out) < wall and rss > 1
    res = run.ns2_tcp_results(tmp_path)
    # 30 flows share a 50 Mbit/s bottleneck.
    assert 45 < res["aggregate goodput (Mbit/s)"] < 50
    assert res["packets dropped"] > 0 and 0.5 < res["Jain's fairness index"] <= 1


@needs_ns
def test_wifi_lte_timing_run_reports_its_simulation_time_and_writes_nothing(tmp_path: Path) -> None:
    # A timing run of the failover (about 0.5 s): no trace is written without "trace".
    proc = subprocess.run(["ns", str(HERE / "wifi-lte.tcl"), "failover", str(tmp_path)], capture_output=True,
                          text=True, check=True)
    assert run.ns2_sim_seconds(proc.stdout) > 0
    assert not list(tmp_path.iterdir())


def test_missing_ns2_without_apt_get_stops_with_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="install .*ns2"):
        run.ensure_ns2()


@needs_ns
def test_startup_is_timed_for_both_tools() -> None:
    ns2, ours = run.time_startup(ns2_first=False)
    assert ns2.wall > 0 and ours.wall > 0 and ns2.rss_mib > 1 and ours.rss_mib > 1
    lines = run.timing_table({"start-up": ([ns2], [ours])}, 1)
    assert sum(line.startswith("| start-up |") for line in lines) == 2  # whole process and RSS only
