"""Node positions from Python: mobility keys in a scenario dict, positions as time series."""

from __future__ import annotations

import pytest
import sctpsim
from sctpsim import Scenario

MOBILE = {
    "name": "mobile",
    "duration": "30s",
    "nodes": [
        {
            "name": "MC",
            "interfaces": [{"address": "10.0.0.1"}],
            "position": [0, 0],
            "mobility": {"model": "waypoints", "waypoints": [[100, 0]], "speed": "18km/h"},
        },
        {"name": "AP", "interfaces": [{"address": "10.0.0.2"}], "position": [50, 20.5]},
    ],
    "links": [{"ends": ["MC/eth0", "AP/eth0"], "delay": "1ms", "rate": "10Mbps"}],
    "record": {"interval": "1s"},
}


def test_positions_are_a_time_series_only_when_asked() -> None:
    off = sctpsim.run(MOBILE, seed=1)
    assert "node" not in set(off.timeseries.kind)
    on = sctpsim.run(Scenario.from_dict(MOBILE).set("record.positions", True), seed=1)
    ts = on.timeseries
    nodes = ts[ts.kind == "node"]
    assert set(nodes.unit) == {"m"}
    x = nodes[(nodes.entity == "MC") & (nodes.metric == "x")].value.tolist()
    # 18 km/h = 5 m/s along x for 20 s, then at rest at 100 m.
    assert x == pytest.approx([min(5.0 * t, 100.0) for t in range(31)], rel=1e-12, abs=1e-12)
    ap = nodes[nodes.entity == "AP"]
    assert set(ap[ap.metric == "y"].value) == {20.5}


def test_a_bad_speed_names_its_key() -> None:
    try:
        sctpsim.run(Scenario.from_dict(MOBILE).set("nodes[0].mobility.speed", "18 kmh"))
    except sctpsim.ScenarioError as e:
        assert e.key == "nodes[0].mobility.speed"
        assert "try \"18km/h\"" in str(e)
    else:
        raise AssertionError("accepted")
