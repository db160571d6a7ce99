"""The datacenter study (paper 002): the paper's numbers as transcribed, the sweeps' shape,
the ratio arithmetic on made-up runs, and the real-mode measurements on tiny durations
(their shape only: figures from a loaded machine are not asserted)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
from sctpsim.reproduce import load_study

STUDY = load_study("datacenter")


def test_reference_holds_the_numbers_the_text_gives() -> None:
    ref = STUDY.reference()
    assert ref["ref"].is_unique
    by = ref.set_index("ref")["value"]
    assert by["fig10-gbn-vs-sack-2.5"] == 1.25
    assert by["crc-send"] == 24 and by["crc-recv"] == 42
    assert by["t1-tcp-send"] == 1394 and by["t1-sctp-recv"] == 1356
    assert by["t2-sctp-send-128k"] == 102 and by["t2-tcp-recv-256k"] == 524
    assert by["t3-sctp4x2-send"] == 1776 and by["t3-one-assoc-vs-four"] == 0.52
    assert math.isclose(by["t1-cpu-send"], 143.2 / 62.4, rel_tol=1e-3)
    assert (ref["source"] == "Table II").sum() == 8


def test_sweeps_cover_the_variants_and_quick_is_smaller() -> None:
    names = {s.name for s in STUDY.sweeps}
    assert names == {"loss-sctp", "loss-tcp", "streams-sctp-1x2", "streams-sctp-4x2", "streams-tcp-4"}
    full = {s.name: s.load(False) for s in STUDY.sweeps}
    quick = {s.name: s.load(True) for s in STUDY.sweeps}
    assert len(full["loss-sctp"].points()) == 9 * 4
    assert len(quick["loss-sctp"].points()) == 4 * 4
    assert len(full["loss-tcp"].points()) == 9
    assert quick["loss-sctp"].replications == 2 < full["loss-sctp"].replications


def _fake_ctx() -> SimpleNamespace:
    rows = []
    for r in range(2):
        for loss in (0.0, 0.005, 0.025):
            for name, g in (("sack", 100.0), ("go-back-n", 80.0), ("sack-every-7", 90.0), ("sack-every-7-counted", 70.0)):
                rows.append({"name": name, "links[0].forward.loss.p": loss, "replication": r,
                             "status": "ok", "sctp/sink/goodput": g * 1e6 * (1 + r)})
    sctp = pd.DataFrame(rows)
    tcp = pd.DataFrame([{"links[0].forward.loss.p": loss, "replication": r, "status": "ok",
                         "flow/send/goodput": 110e6 * (1 + r)} for r in range(2) for loss in (0.0, 0.005, 0.025)])
    frames = {"loss-sctp": sctp, "loss-tcp": tcp}
    return SimpleNamespace(runs=lambda sweep: frames[sweep], reference=STUDY.reference())


def test_the_figure_ratios_pair_replications() -> None:
    analysis = STUDY.analysis()
    comparison = analysis._loss_comparison(_fake_ctx())
    ours = comparison.frame.set_index("ref")["ours"]
    np.testing.assert_allclose(ours["fig10-gbn-vs-sack-2.5"], 0.8)
    np.testing.assert_allclose(ours["fig9-tcp-vs-sctp-low-loss"], 1.1)
    table = analysis._loss_table(_fake_ctx())
    assert len(table.frame) == 3 and table.frame.columns[0] == "drop rate [%]"


def test_real_mode_measurements_have_their_shape() -> None:
    analysis = STUDY.analysis()
    real = analysis.measure_real((2560,), seconds=0.3)
    assert list(real["protocol"]) == ["SCTP", "SCTP without CRC32c", "TCP"]
    assert (real["error"] == "").all(), real["error"].tolist()
    assert (real["goodput"] > 0).all() and (real["cpu_per_byte_send"] > 0).all()
    assert (real["cpu_per_byte_recv"] > 0).all()
    ctx = SimpleNamespace(reference=STUDY.reference())
    measured, comparison = analysis._real_items(ctx, real, 0.3)
    assert len(measured.frame) == 3
    # 12 KB and 128 B were not measured: those rows have no value of ours.
    assert comparison.frame["ours"].isna().all()


def test_quick_reproduction_holds_every_reference_number(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The whole --quick study (simulated sweeps and real mode) through the CLI: every
    number of reference.csv is in a comparison table, with ours beside most of them."""
    import subprocess
    import sys

    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "sctpsim", "reproduce", "datacenter", "--quick", "--jobs", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    tables = [pd.read_csv(f, keep_default_na=False, na_values=["NaN"]) for f in (out / "tables").glob("*.csv")]
    rows = pd.concat([t for t in tables if "ref" in t.columns], ignore_index=True)
    shown = rows[rows["ref"] != ""].set_index("ref")
    assert set(STUDY.reference()["ref"]) <= set(shown.index)
    assert shown["ours"].notna().mean() > 0.8
    assert (out / "report.html").is_file() and (out / "real-measurements.csv").is_file()
    png = out / "figures" / "throughput-vs-drop-rate.png"
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 10_000
