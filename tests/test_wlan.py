"""The WLAN example through the command line and the Python API: the summary shows the
wireless interfaces and the channel, and the MAC's scalars reach the results."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sctpsim

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "wlan-saturation.toml"


def test_summary_shows_wlan_interfaces_and_channel(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sctpsim", "run", str(EXAMPLE), "--set", "duration=1s", "--out", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "240"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "WLAN interfaces" in proc.stdout
    assert "bss1 (channel 1" in proc.stdout
    assert "sta0/wlan0" in proc.stdout
    # Radios are not listed among the wired interfaces as idle rows of dashes.
    wired = proc.stdout.split("WLAN interfaces")[0]
    assert "sta0/wlan0" not in wired


def test_mac_scalars_in_results() -> None:
    scenario = sctpsim.load_scenario(EXAMPLE).with_overrides(["duration=1s"])
    result = scenario.run()
    acked = sum(result.scalar("iface", f"sta{i}/wlan0", "mac_tx_acked") for i in range(10))
    received = result.scalar("iface", "ap/wlan0", "mac_rx_data") + result.scalar(
        "iface", "ap/wlan0", "mac_rx_duplicates"
    )
    assert acked == received > 1000
    assert 0.7 < result.scalar("wlan", "bss1", "utilization") < 0.85
    assert result.scalar("iface", "sta0/wlan0", "drops_queue_full") > 0


def test_report_draws_no_empty_legend(tmp_path: Path) -> None:
    # The stations' radios queue and drop, but their queues have no time series, so the
    # queues figure has nothing with a label: no legend, and no matplotlib warning.
    proc = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-m", "sctpsim", "run", str(EXAMPLE),
         "--set", "duration=1s", "--report", "--out", "out", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert (tmp_path / "out" / "report.html").is_file()
