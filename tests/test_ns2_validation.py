"""The ns-2.35 side-by-side validation (validation/ns2): its sctpsim scenarios, its trace
analysis and CMT switch-over, and, where ns-2 is installed, the comparison itself."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scripts import ROOT, load_script

HERE = ROOT / "validation" / "ns2"


compare = load_script(HERE / "compare.py", "ns2_compare")


def test_lossless_counterpart_sends_every_chunk_once_over_the_primary(tmp_path: Path) -> None:
    case = compare.CASES[0]
    m = compare.run_sctpsim(case, "sctp", 1, tmp_path, None)
    chunks = -(-4_000_000 // compare.CHUNK)
    assert m.sent == {1: chunks, 2: 0}
    assert m.retransmitted == {1: 0, 2: 0} and m.drops == {1: 0, 2: 0}
    # 4 MB over 10 Mbit/s takes 3.2 s plus headers (1500/1452) and slow start.
    assert 3.3 < m.transfer_time < 3.5
    assert m.completion_time > m.transfer_time


def test_each_path_capture_holds_only_its_own_addresses(tmp_path: Path) -> None:
    # With a router on each path the second path's packets cross the second path's links
    # (two direct links between the same hosts would not: see README.md).
    case = compare.CASES[0]
    compare.run_sctpsim(case, "sctp", 1, tmp_path, ["--set", "apps[1].bytes=50000"])
    out = tmp_path / "out"
    for iface, net in (("A-eth0", "10.1."), ("A-eth1", "10.2."), ("B-eth1", "10.2.")):
        data = (out / f"{iface}.pcap").read_bytes()
        pos, seen = 24, 0
        while pos + 16 <= len(data):
            caplen = int.from_bytes(data[pos + 8 : pos + 12], "little")
            pkt = data[pos + 16 : pos + 16 + caplen]
            pos += 16 + caplen
            src = ".".join(str(b) for b in pkt[12:16])
            dst = ".".join(str(b) for b in pkt[16:20])
            assert src.startswith(net) and dst.startswith(net), (iface, src, dst)
            seen += 1
        assert seen > 0, iface


def test_cmt_settings_reach_the_scenario_and_use_both_paths(tmp_path: Path) -> None:
    args, _, _ = compare.cmt_overrides(compare.sctpsim_keys())
    if args is None:
        pytest.skip("this build has no sctp.cmt keys")
    m = compare.run_sctpsim(compare.CASES[0], "cmt", 1, tmp_path, args)
    # Both paths carry new data, the faster one more; together well above one path's 10 Mbit/s.
    assert m.sent[1] > m.sent[2] > 0.3 * (m.sent[1] + m.sent[2])
    assert m.goodput_mbps > 15


def test_cmt_retransmits_only_what_the_queues_dropped(tmp_path: Path) -> None:
    # Case C under CMT (RTX-SSTHRESH, SFR): queue overflow on both paths. Miss indications
    # count per destination, also in Fast Recovery, so no chunk still in flight on the slower
    # path is struck by SACKs for the faster one: every retransmission repairs a drop and no
    # timer expires (counting against the association's highest reported TSN in Fast Recovery
    # gave 158 retransmissions for 143 drops and a T3 timeout).
    args, _, _ = compare.cmt_overrides(compare.sctpsim_keys())
    case = next(c for c in compare.CASES if c.name == "droptail")
    m = compare.run_sctpsim(case, "cmt", 1, tmp_path, args)
    drops = sum(m.drops.values())
    assert drops > 50 and m.sent[2] > 1000
    assert sum(m.retransmitted.values()) <= drops
    assert m.timeouts == 0
    # ns-2.35 takes 3.43 s (RESULTS.md); with the spurious retransmissions it took 4.60 s.
    assert m.transfer_time < 3.6


def test_metrics_count_retransmissions_per_path_and_wait_for_every_tsn() -> None:
    sends = [(1.0, 1, 1), (1.1, 1, 2), (1.2, 1, 3), (2.0, 2, 2), (2.5, 1, 2)]
    arrivals = [(1.05, 1), (1.25, 3), (2.2, 2), (2.6, 2)]
    m = compare.metrics_from_events(sends, arrivals, [1, 1, 2], 1, 3000)
    assert m.sent == {1: 4, 2: 1} and m.retransmitted == {1: 1, 2: 1}
    assert m.drops == {1: 2, 2: 1} and m.timeouts == 1
    assert m.transfer_time == pytest.approx(1.2)
    assert m.goodput_mbps == pytest.approx(3000 * 8 / 1.2 / 1e6)
    unfinished = compare.metrics_from_events(sends, arrivals[:2], [], 0, 3000)
    assert unfinished.transfer_time != unfinished.transfer_time  # NaN: TSN 2 never arrived


def test_cmt_rows_wait_for_the_cmt_keys_and_name_a_missing_one() -> None:
    keys = {"apps[].sctp.rto_min": "duration", "apps[].sctp.assoc_max_retrans": "integer 0..1000"}
    args, why, _ = compare.cmt_overrides(keys)
    assert args is None and "not yet available" in why
    cmt = {f"apps[].sctp.cmt.{k}": "boolean" for k in ("enabled", "sfr", "cuc", "dac")}
    cmt["apps[].sctp.cmt.scheduler"] = '"round-robin" \\| "largest-cwnd"'
    del cmt["apps[].sctp.cmt.dac"]
    args, why, _ = compare.cmt_overrides(keys | cmt)
    assert args is None and "DAC" in why
    cmt["apps[].sctp.cmt.dac"] = "boolean"
    # Without a policy key CMT still runs, with the default policy, and the note says so.
    args, why, policy_set = compare.cmt_overrides(keys | cmt)
    assert args and "RTX-SAME" in why and not policy_set
    cmt["apps[].sctp.cmt.rtx_policy"] = '"same" \\| "asap" \\| "ssthresh"'
    cmt["apps[].sctp.cmt.pf"] = '"on" \\| "off"'
    args, why, policy_set = compare.cmt_overrides(keys | cmt)
    assert why == "" and policy_set
    sets = [a for a in args if a != "--set"]
    for app in (0, 1):
        assert f"apps[{app}].sctp.cmt.enabled=true" in sets
        assert f'apps[{app}].sctp.cmt.rtx_policy="ssthresh"' in sets
        assert f'apps[{app}].sctp.cmt.scheduler="round-robin"' in sets
        assert f'apps[{app}].sctp.cmt.pf="off"' in sets
    # The scheduler may sit beside the other association keys; RFC 7829's pf is not CMT-PF.
    del cmt["apps[].sctp.cmt.scheduler"], cmt["apps[].sctp.cmt.pf"]
    beside = {"apps[].sctp.scheduler": '"primary" \\| "round-robin"', "apps[].sctp.pf": '"on" \\| "off"'}
    args, why, _ = compare.cmt_overrides(keys | cmt | beside)
    sets = [a for a in args if a != "--set"]
    assert "CMT-PF switch: sctpsim's default (ns-2: off)" in why and 'apps[1].sctp.scheduler="round-robin"' in sets
    assert not any(".pf=" in a for a in sets)


def test_cmt_with_a_small_window_sends_no_chunk_twice_to_the_receiver(tmp_path: Path) -> None:
    # Case B under CMT (RTX-SSTHRESH): an older SACK arriving after a newer one (they return
    # over paths of 20 and 40 ms) must not make the sender overestimate the 64 KiB window.
    # When it did, the receiver dropped chunks it had no room for and they came again: a
    # TSN reached B twice (seed 1: once; ns-2: never). Every retransmission repairs a loss.
    args, _, _ = compare.cmt_overrides(compare.sctpsim_keys())
    case = next(c for c in compare.CASES if c.name == "lossy")
    for seed in (1, 2, 3):
        work = tmp_path / str(seed)
        m = compare.run_sctpsim(case, "cmt", seed, work, args)
        out = work / "out"
        arrivals = [tsn for iface in ("B-eth0", "B-eth1") for *_, tsns in compare.read_pcap(out / f"{iface}.pcap")
                    for tsn in tsns]
        assert len(arrivals) == len(set(arrivals)), f"seed {seed}: a TSN reached the receiver twice"
        assert m.retransmitted[2] > 0 and m.retransmitted[1] == 0  # RTX-SSTHRESH: to path 2


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (apt-get install ns2)")
def test_agrees_with_ns2(tmp_path: Path) -> None:
    # compare.py --quick: every case in both modes, 3 seeds of the random-loss case.
    out = tmp_path / "RESULTS.md"
    subprocess.run([sys.executable, str(HERE / "compare.py"), "--quick", "--out", str(out)],
                   check=True, capture_output=True)
    sections = re.split(r"^## ", out.read_text(), flags=re.M)[1:]
    assert len(sections) == 6 and not any("| not available |" in s for s in sections)
    for section in sections:
        row = re.search(r"\| transfer time \(s\) \| ([\d.]+)[^|]*\| ([\d.]+)[^|]*\|", section)
        assert row, section
        ns2, ours = float(row.group(1)), float(row.group(2))
        # Deterministic cases within 5 %; the random-loss case (3 seeds, a standard error of
        # about 3 %) within 15 % (README.md: -5.7 % over 30 seeds in both modes).
        limit = 0.15 if section.startswith("B:") else 0.05
        assert abs(ours - ns2) / ns2 < limit, section
        if "single-path SCTP" in section and not section.startswith("B:"):
            rtx = re.search(r"\| retransmitted chunks, path 1 \| ([\d.]+) \| ([\d.]+) \|", section)
            assert rtx and abs(float(rtx.group(1)) - float(rtx.group(2))) <= 2, section
