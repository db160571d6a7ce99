"""The wlan-handover study (paper 001): the paper's numbers as transcribed, the sweeps and
their --quick form, one short run of the study's network in which the mobile client hands
over, and the analysis on made-up runs (tables holding every reference number, the host
count of a run, the per-cell statistics)."""

from __future__ import annotations

import math
import tomllib
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import sctpsim
from sctpsim.reproduce import COMPARISON_COLUMNS, Comparison, Figure, StudyContext, load_study

STUDY = load_study("wlan-handover")
HOSTS = (5, 10, 15, 20, 25, 30)


def test_reference_holds_every_number_of_tables_4_1_to_4_20() -> None:
    ref = STUDY.reference()
    assert ref["ref"].is_unique
    tables = ref[ref["source"].str.startswith("Table 4.")]
    assert len(tables) == 324
    counts = tables.groupby("source").size()
    for t in (1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16):
        assert counts[f"Table 4.{t}"] == 12  # 6 host counts x (mean, stdev)
    for t in (7, 8, 9, 17, 18, 19):
        assert counts[f"Table 4.{t}"] == 24  # two delays
    assert counts["Table 4.10"] == counts["Table 4.20"] == 18  # 6 x 3, one value per cell
    by = ref.set_index("ref")["value"]
    assert by["t4_1-a-r54-n5-mc-thr-mean"] == 5.067


def test_sweeps_cover_the_grid_and_quick_keeps_two_host_counts() -> None:
    full = {s.name: s.load(False) for s in STUDY.sweeps}
    quick = {s.name: s.load(True) for s in STUDY.sweeps}
    assert set(full) == {"tcp-background", "sctp-background"}
    for name in full:
        assert full[name].replications == 50 and quick[name].replications == 2
        assert len(full[name].points()) == 18  # 6 host counts x 3 rates or speeds
        assert len(quick[name].points()) == 6  # 2 host counts x 3
    # The rate zip of A survives --quick; only the host-count zip is replaced.
    a = quick["tcp-background"]
    assert any("nodes[3].interfaces[0].wlan.rate" in g for g in a.zip)
    host_zip = next(g for g in a.zip if "nodes[6].present" in g)
    assert len(host_zip) == 30
    present = [sum(v[i] for v in host_zip.values()) for i in range(2)]
    assert present == [5, 30]
    # The full sweep's cells take part with 5, 10, .., 30 hosts, always H1..Hn.
    full_zip = next(g for g in full["tcp-background"].zip if "nodes[6].present" in g)
    for i, n in enumerate((5, 10, 15, 20, 25, 30)):
        assert [full_zip[f"nodes[{6 + k}].present"][i] for k in range(30)] == [k < n for k in range(30)]


def test_scenarios_have_the_papers_handover_set_up() -> None:
    for scenario in ("scenario-a.toml", "scenario-b.toml"):
        data = tomllib.loads((STUDY.directory / scenario).read_text())
        mc = next(n for n in data["nodes"] if n["name"] == "MC")
        radios = [i["wlan"] for i in mc["interfaces"]]
        assert [r["association"] for r in radios] == ["roam", "roam"]
        assert [r["scan_channels"] for r in radios] == [["wlan1"], ["wlan2"]]
        assert all(r["handover_threshold"] == -90.0 and r["scan_threshold"] == -80.0 for r in radios)
        assert all(w["sensitivity"] == -90.0 for w in data["wlans"])
        apps = data["apps"]
        assert apps[1]["name"] == "mc"
        assert apps[1]["sctp"]["handover"] == "make-before-break"
        assert apps[1]["sctp"]["handover_trigger"] == "old-address-lost"
        assert [a["name"] for a in apps[3:]] == [f"h{k}" for k in range(1, 31)]
        # H1..H10 take part as written, H11..H30 are left out.
        hosts = [n for n in data["nodes"] if n["name"].startswith("H")]
        assert [n.get("present", True) for n in hosts] == [k < 10 for k in range(30)]


def test_the_mobile_client_hands_over_in_the_studys_network() -> None:
    """A short run of scenario B: 5 hosts, the MC walking at 15.5 km/h from x = 364 m
    toward AP2 from 10 s; it loses AP1 (-90 dBm, x = 404 m) at about 19.3 s."""
    text = (STUDY.directory / "scenario-b.toml").read_text()
    sets = [
        'duration="24s"',
        "nodes[5].position=[364.0, 200.0]",
        'nodes[5].mobility={ model = "waypoints", waypoints = [[450.0, 200.0]], speed = "15.5km/h", start = "10s" }',
        *[f"nodes[{k}].present=false" for k in range(11, 16)],
    ]
    r = sctpsim.Scenario(text).with_overrides(sets).run()
    s = r.scalars
    assert s["sctp/mc/handovers"] == 1
    assert s["sctp/mc/closed"] == 0
    requested = s["sctp_handover/mc/handover0/requested_at"]
    assert 19.0 < requested < 19.6, requested
    # The old path is gone at the decision: what was in flight on it goes to the new path at
    # once, so the first DATA leaves by wlan1 within the ASCONF's round trip at most.
    delay = s["sctp_handover/mc/handover0/handover_delay"]
    assert 0 <= delay <= s["sctp_handover/mc/handover0/asconf_rtt"] < 0.5
    # Data flowed before and after the handover (through AP1, then AP2).
    assert s["flow/mc/rx_bytes"] > 1e6


# ------------------------------------------------------------------ analysis, made-up runs


def _fake_runs(scn: str) -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(1)
    values = (54, 36, 24) if scn == "A" else ("4.5km/h", "6.5km/h", "15.5km/h")
    for v in values:
        for n in HOSTS:
            for rep in range(3):
                row: dict[str, object] = {"replication": rep, "status": "ok"}
                for k in range(30):
                    row[f"nodes[{6 + k}].present"] = k < n
                if scn == "A":
                    row["nodes[3].interfaces[0].wlan.rate"] = v
                else:
                    row["nodes[5].mobility.speed"] = v
                row["flow/mc/goodput"] = 4e6 + rng.normal(0, 1e5)
                for k in range(n):
                    row[f"flow/h{k + 1}/goodput"] = 3e6 if k == 0 else 1e6
                row["sctp/mc/handovers"] = 1.0 if rep else 0.0
                row["sctp/mc/handover_delay_mean"] = 0.012 if rep else math.nan
                row["flow/mc/delay_mean"] = 0.040
                row["flow/mc/loss_rate"] = 0.001
                row["sctp/mc/closed"] = 0.0
                rows.append(row)
    return pd.DataFrame(rows)


def test_analysis_fills_every_table_from_the_runs(tmp_path) -> None:
    outcomes = {
        "tcp-background": SimpleNamespace(runs=_fake_runs("A")),
        "sctp-background": SimpleNamespace(runs=_fake_runs("B")),
    }
    ctx = StudyContext(STUDY, True, tmp_path, outcomes)
    items = STUDY.analysis().analyse(ctx)
    comparisons = [c for c in items if isinstance(c, Comparison)]
    assert sum(isinstance(c, Figure) for c in items) == 2
    for c in comparisons:
        assert list(c.frame.columns[-len(COMPARISON_COLUMNS) :]) == list(COMPARISON_COLUMNS), c.id
    rows = pd.concat([c.frame for c in comparisons], ignore_index=True)
    shown = rows[rows["ref"] != ""].set_index("ref")
    reference = STUDY.reference()
    assert not set(reference["ref"]) - set(shown.index)
    by = shown["ours"]
    # The mean over the cell's n hosts: host 1 at 3 Mbit/s, the others at 1.
    assert by["t4_4-a-r54-n5-host-thr-mean"] == pytest.approx((3 + 4) / 5)
    assert by["t4_14-b-v4_5-n30-host-thr-mean"] == pytest.approx((3 + 29) / 30)
    # The handover delay averages the runs that handed over (2 of 3).
    assert by["t4_7-a-r54-n5-ho-mean"] == pytest.approx(12.0)
    assert shown.loc["t4_7-a-r54-n5-ho-mean", "n"] == 2
    assert by["t4_10-a-r36-n15-loss"] == pytest.approx(0.001)
    assert by["t4_19-b-v15_5-n25-e2e-mean"] == pytest.approx(40.0)
    assert shown["ours"].notna().mean() > 0.9
