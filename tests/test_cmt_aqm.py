"""The cmt-aqm study (paper 003): the paper's numbers as transcribed, the study's sweeps, and
the impact factor / increment arithmetic of its analysis on made-up runs (no simulation)."""

from __future__ import annotations

import math
import tomllib
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sctpsim.reproduce import load_study

STUDY = load_study("cmt-aqm")


def test_reference_holds_every_number_the_text_gives() -> None:
    ref = STUDY.reference()
    assert ref["ref"].is_unique
    # Sections 4.1 and 4.2: 2 topologies x 3 quantities x 3 mixes x 6 disciplines.
    assert (ref["source"].str.startswith("Section 4.")).sum() == 108
    assert (ref["source"] == "Section 5.2.1 (Fig. 16)").sum() == 15
    assert (ref["source"] == "Table 3").sum() == 12
    by = ref.set_index("ref")["value"]
    # Spot checks against the paper's text.
    assert by["symm-if-throughput-cbr-rem"] == 0.4913
    assert by["symm-if-delay-cbr-vbr-droptail"] == 1.001
    assert by["symm-ia-loss-cbr-vbr-fred"] == 1.601
    assert by["symm-ia-loss-vbr-droptail"] == 0
    assert by["asym-if-delay-cbr-red"] == 0.0566
    assert by["asym-ia-loss-cbr-vbr-pi"] == 0.8056
    assert by["fig16-rbuf32k-pf3-vs-pf2"] == -2.02
    assert by["fig16-rbuf512k-pf3-vs-pf4"] == 7.0392
    assert by["t3-condition3-pf3"] == 3.7727


def test_conclusions_mostly_follow_the_smallest_factor_in_the_text() -> None:
    conclusions = pd.read_csv(STUDY.directory / "conclusions.csv")
    assert len(conclusions) == 18
    ref = STUDY.reference()
    mismatches = []
    for _, c in conclusions.iterrows():
        kind = "IA" if c["metric"] == "loss rate" else "if"
        rows = ref[
            (ref["topology"] == c["topology"])
            & (ref["traffic"] == c["traffic"])
            & (ref["quantity"] == f"{kind} {c['metric']}")
        ]
        assert len(rows) == 6
        smallest = rows.loc[rows["value"].idxmin(), "aqm"]
        if smallest != c["best_aqm"]:
            mismatches.append((c["topology"], c["traffic"], c["metric"], c["best_aqm"]))
    # The three places the paper's choice is not the smallest factor its text gives
    # (README.md lists them).
    assert mismatches == [
        ("symmetric", "TCP+UDP/CBR&VBR", "throughput", "REM"),
        ("symmetric", "TCP+UDP/VBR", "loss rate", "BLUE"),
        ("asymmetric", "TCP+UDP/CBR", "throughput", "REM"),
    ]


def test_sweeps_cover_the_grid_and_quick_is_smaller() -> None:
    names = {s.name for s in STUDY.sweeps}
    for topo in ("sym", "asym"):
        for mix in ("none", "cbr", "vbr", "cbr-vbr"):
            assert {f"{topo}-{mix}", f"modern-{topo}-{mix}", f"ecn-{topo}-{mix}"} <= names
    assert {"pf-failure", "pf-condition1", "pf-condition2", "pf-condition3"} <= names
    full = {s.name: s.load(False) for s in STUDY.sweeps}
    quick = {s.name: s.load(True) for s in STUDY.sweeps}
    assert len(full["sym-cbr"].points()) == 6
    assert full["pf-failure"].replications == 5 and quick["pf-failure"].replications == 2
    assert len(quick["pf-failure"].points()) < len(full["pf-failure"].points())
    # Without cross traffic nothing is random: one replication; with it, five.
    for grid in ("", "modern-", "ecn-"):
        assert full[f"{grid}sym-none"].replications == 1 == quick[f"{grid}asym-none"].replications
        assert full[f"{grid}sym-cbr"].replications == 5
    assert len(full["ecn-sym-cbr"].points()) == 8


def _apps(scenario: str) -> list[dict]:
    return tomllib.loads((STUDY.directory / scenario).read_text())["apps"]


def test_cross_traffic_starts_are_jittered_and_cmt_starts_on_time() -> None:
    for scenario in ("symmetric.toml", "asymmetric.toml", "pf-failure.toml", "pf-loss.toml"):
        for app in _apps(scenario):
            if app["kind"] in ("tcp-bulk", "udp-cbr", "udp-vbr") and app["start"] == "1s":
                assert app.get("start_jitter") == "500ms", (scenario, app["name"])
            else:
                assert "start_jitter" not in app, (scenario, app["name"])


def test_the_ecn_grid_turns_ecn_on_at_every_transport_end_and_both_bottlenecks() -> None:
    for topo, scenario in (("sym", "symmetric.toml"), ("asym", "asymmetric.toml")):
        apps = _apps(scenario)
        for mix in ("none", "cbr", "vbr", "cbr-vbr"):
            data = tomllib.loads((STUDY.directory / "sweeps" / f"ecn-{topo}-{mix}.toml").read_text())
            for i, app in enumerate(apps):
                proto = app["kind"].split("-")[0]
                if proto in ("tcp", "sctp"):
                    assert data["set"].get(f"apps[{i}].{proto}.ecn") is True, (mix, i, app["name"])
            for link in ("links[1]", "links[4]"):
                assert data["zip"][f"{link}.queue.ecn"] == [True] * 8
                assert "droptail" not in data["zip"][f"{link}.queue.kind"]
            # The traffic mix is the one of the paper's grid.
            plain = tomllib.loads((STUDY.directory / "sweeps" / f"{topo}-{mix}.toml").read_text())
            assert {k: v for k, v in data["set"].items() if k.endswith(".start")} == plain["set"]


def _fake_ctx(values: dict[tuple[str, str], list[float]]) -> SimpleNamespace:
    """Runs of made-up goodput / delay / loss for the analysis (no simulation)."""
    frames = {}
    for (sweep, kind), vals in values.items():
        rows = [
            {
                "links[1].queue.kind": kind,
                "replication": r,
                "status": "ok",
                "flow/cmt/goodput": v,
                "flow/cmt/delay_mean": v / 1e7,
                "flow/cmt/loss_rate": v / 1e9,
            }
            for r, v in enumerate(vals)
        ]
        frames[sweep] = pd.concat([frames.get(sweep, pd.DataFrame()), pd.DataFrame(rows)])
    return SimpleNamespace(runs=lambda sweep: frames[sweep])


def test_impact_factor_and_increment_follow_equations_1_and_2() -> None:
    analysis = STUDY.analysis()
    ctx = _fake_ctx({("sym-none", "rem"): [4e6, 6e6], ("sym-cbr", "rem"): [1e6, 3e6]})
    f = analysis._factor(ctx, "symmetric", "cbr", "REM", "throughput")
    np.testing.assert_allclose(f, [0.75, 0.5])  # |x - y| / x per replication
    ia = analysis._factor(ctx, "symmetric", "cbr", "REM", "loss rate")
    np.testing.assert_allclose(ia, [100 * (1e-3 - 4e-3), 100 * (3e-3 - 6e-3)])
    est = analysis._estimate(f)
    assert est.mean == pytest.approx(0.625) and est.n == 2 and est.low < 0.625 < est.high
    assert math.isnan(analysis._estimate(np.array([1.0])).low)


def test_a_single_baseline_run_serves_every_replication() -> None:
    analysis = STUDY.analysis()
    ctx = _fake_ctx({("sym-none", "red"): [4e6], ("sym-cbr", "red"): [1e6, 2e6, 3e6]})
    f = analysis._factor(ctx, "symmetric", "cbr", "RED", "throughput")
    np.testing.assert_allclose(f, [0.75, 0.5, 0.25])
    ia = analysis._factor(ctx, "symmetric", "cbr", "RED", "loss rate")
    np.testing.assert_allclose(ia, [100 * (1e-3 - 4e-3), 100 * (2e-3 - 4e-3), 100 * (3e-3 - 4e-3)])
    # The other grids are read from their own sweeps.
    ctx = _fake_ctx({("ecn-sym-none", "codel"): [2e6], ("ecn-sym-vbr", "codel"): [1e6, 3e6]})
    np.testing.assert_allclose(analysis._factor(ctx, "symmetric", "vbr", "CoDel", "throughput", "ecn-"), [0.5, 0.5])
