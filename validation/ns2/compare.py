#!/usr/bin/env python3
"""Run each validation case in ns-2.35 and in sctpsim and write RESULTS.md.

Usage (from anywhere; needs `ns` from Debian's ns2 package and sctpsim installed):

    python validation/ns2/compare.py            # every case, 30 seeds for the lossy one
    python validation/ns2/compare.py --quick    # 3 seeds
    python validation/ns2/compare.py --keep DIR # keep the raw traces and pcaps in DIR

Both tools are measured the same way, from their packet traces: ns-2's trace-all file
(`+` at the sender's interface nodes for transmissions, `r` at the receiver's for arrivals,
`d` for drops) and sctpsim's pcap captures of the four host interfaces (transmissions at
the start of sending, arrivals at the end of reception). Per DATA chunk TSN:

- transfer time: first DATA transmission -> the instant every TSN has reached the receiver;
- goodput: user bytes / transfer time (README.md, "Metric definitions": from the first send to the last delivery);
- completion time: application start (0.5 s) -> every TSN received (includes the handshake);
- per path: DATA chunks sent and retransmitted (ns-2: a TSN sent before, on any path;
  sctpsim: the sender's per-path counters, as its capture misses packets its own interface
  queue drops), packets (DATA or SACK) dropped on the path's links;
- T3 timeouts from the senders' own counters (ns-2's timeoutCount per destination,
  sctpsim's t3_timeouts per path).

CMT rows need sctpsim's `sctp.cmt` keys; when `sctpsim params` does not list them the
rows are reported as not yet available in this build.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
APP_START = 0.5
# User bytes per DATA chunk in both tools (MTU 1500 - IP 20 - SCTP 12 - DATA header 16).
CHUNK = 1452

# sctpsim's CMT settings matching the ns-2 scripts (Agent/SCTP/CMT with useCmtReordering_,
# useCmtCwnd_, useCmtDelAck_ = 1, eCmtRtxPolicy_ = 2 (RTX-SSTHRESH), useCmtPF_ = 0):
# (what, how to recognise its key among those `sctpsim params` lists under apps[].sctp.cmt
# or else apps[].sctp, value, required). A required key this build does not list makes the
# CMT rows report which one; an optional one is left at its default and RESULTS.md says so
# (the round-robin scheduler comes with CMT; the policy and CMT-PF keys may come later).
CMT_SETTINGS = [
    ("CMT switch", lambda k: k == "enabled", True, True),
    ("SFR switch", lambda k: k == "sfr", True, True),
    ("CUC switch", lambda k: k == "cuc", True, True),
    ("DAC switch", lambda k: k == "dac", True, True),
    ("retransmission policy", lambda k: "policy" in k or k in ("rtx", "retransmit", "retransmission"), "ssthresh",
     False),
    ("scheduler", lambda k: k == "scheduler", "round-robin", False),
    ("CMT-PF switch", lambda k: k in ("pf", "pf_enabled", "cmt_pf"), False, False),
]


# ns-2's eCmtRtxPolicy_ values (sctp-cmt.h, CmtRtxPolicy_E).
NS2_RTX_SAME = 1
NS2_RTX_SSTHRESH = 2


@dataclass(frozen=True)
class Case:
    """One scenario, as a pair of scripts."""

    name: str
    title: str
    tcl: str
    toml: str
    seeds: int  # 1 for a deterministic (lossless) case


CASES = [
    Case("lossless", "A: lossless, 20/40 ms RTT, rwnd 256 KiB, 4 MB", "two-paths-lossless.tcl",
         "two-paths-lossless.toml", 1),
    Case("lossy", "B: 1 % loss on path 1, rwnd 64 KiB, 8 MB", "two-paths-lossy.tcl",
         "two-paths-lossy.toml", 30),
    Case("droptail", "C: queue overflow, 50-packet queues, rwnd 1 MiB, 8 MB", "two-paths-droptail.tcl",
         "two-paths-droptail.toml", 1),
]
MODES = ["sctp", "cmt"]


@dataclass
class Metrics:
    """What one run of one tool measured."""

    transfer_time: float = math.nan
    completion_time: float = math.nan
    goodput_mbps: float = math.nan
    sent: dict[int, int] = field(default_factory=lambda: {1: 0, 2: 0})
    retransmitted: dict[int, int] = field(default_factory=lambda: {1: 0, 2: 0})
    drops: dict[int, int] = field(default_factory=lambda: {1: 0, 2: 0})
    timeouts: int = 0


# ----------------------------------------------------------------------------------------
# Trace analysis shared by both tools
# ----------------------------------------------------------------------------------------


def metrics_from_events(sends, arrivals, drops, timeouts, total_bytes) -> Metrics:
    """sends: (time, path, tsn) in time order; arrivals: (time, tsn); drops: path list."""
    m = Metrics(timeouts=timeouts)
    seen: set[int] = set()
    for _, path, tsn in sends:
        m.sent[path] += 1
        if tsn in seen:
            m.retransmitted[path] += 1
        seen.add(tsn)
    for path in drops:
        m.drops[path] += 1
    first_arrival: dict[int, float] = {}
    for t, tsn in arrivals:
        first_arrival.setdefault(tsn, t)
    if not sends or not seen or set(first_arrival) != seen:
        return m  # the transfer did not finish
    done = max(first_arrival.values())
    m.transfer_time = done - sends[0][0]
    m.completion_time = done - APP_START
    m.goodput_mbps = total_bytes * 8 / m.transfer_time / 1e6
    return m


# ----------------------------------------------------------------------------------------
# ns-2
# ----------------------------------------------------------------------------------------


def run_ns2(case: Case, mode: str, seed: int, work: Path, rtx_policy: int = NS2_RTX_SSTHRESH) -> Metrics:
    work.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["ns", str(HERE / case.tcl), mode, str(seed), str(work), str(rtx_policy)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"ns {case.tcl} {mode} {seed} failed:\n{proc.stderr}")
    return parse_ns2(work)


def parse_ns2(work: Path) -> Metrics:
    info = dict(line.split() for line in (work / "nodes.txt").read_text().splitlines())
    total_bytes = int(info["bytes"])
    a_if = {int(info["a_if0"]): 1, int(info["a_if1"]): 2}
    b_if = {int(info["b_if0"]): 1, int(info["b_if1"]): 2}
    path_of_node = {int(info["a_if0"]): 1, int(info["r1"]): 1, int(info["b_if0"]): 1,
                    int(info["a_if1"]): 2, int(info["r2"]): 2, int(info["b_if1"]): 2}
    sends, arrivals, dropped = [], [], {}
    with open(work / "out.tr") as f:
        for line in f:
            # ev time from to sctp size flags fid src dst seq TSN uid stream ssn
            p = line.split()
            if len(p) < 13 or p[4] != "sctp":
                continue
            ev, t, src, dst = p[0], float(p[1]), int(p[2]), int(p[3])
            if ev == "d":
                # one line per chunk: count each packet (uid) once, DATA or control
                dropped.setdefault(int(p[12]), path_of_node[src])
                continue
            if not p[6].endswith("D"):
                continue
            tsn = int(p[11])
            if ev == "+" and src in a_if:
                sends.append((t, a_if[src], tsn))
            elif ev == "r" and dst in b_if:
                arrivals.append((t, tsn))
    drops = list(dropped.values())
    # The agent's trace channel also receives garbage bytes (ns-2.35 writes an uninitialised
    # buffer in SendBufferDequeueUpTo), so read only the "print" lines.
    text = (work / "agent.tr").read_bytes().decode("latin-1")
    timeouts = sum(int(x) for x in re.findall(r"timeoutCount: (\d+)", text))
    return metrics_from_events(sends, arrivals, drops, timeouts, total_bytes)


# ----------------------------------------------------------------------------------------
# sctpsim
# ----------------------------------------------------------------------------------------


def sctpsim_cmd() -> list[str]:
    exe = shutil.which("sctpsim")
    return [exe] if exe else [sys.executable, "-m", "sctpsim"]


def sctpsim_keys() -> dict[str, str]:
    """Scenario key -> type, from `sctpsim params --markdown`."""
    out = subprocess.run(sctpsim_cmd() + ["params", "--markdown"], capture_output=True, text=True,
                         check=True).stdout
    keys = {}
    for line in out.splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|\s*([^|]*)\|", line)
        if m:
            keys.setdefault(m.group(1), m.group(2).strip())
    return keys


def cmt_overrides(keys: dict[str, str]) -> tuple[list[str] | None, str, bool]:
    """`--set` overrides that turn CMT on for the sender and the sink, a note on what could
    not be set, and whether the retransmission policy could; or None and why not."""
    cmt_prefix, sctp_prefix = "apps[].sctp.cmt.", "apps[].sctp."
    cmt = {k[len(cmt_prefix):]: t for k, t in keys.items() if k.startswith(cmt_prefix)}
    if not cmt:
        return None, "not yet available in this build (`sctpsim params` lists no sctp.cmt keys)", False
    sctp = {k[len(sctp_prefix):]: t for k, t in keys.items()
            if k.startswith(sctp_prefix) and "." not in k[len(sctp_prefix):]}
    sets, unset = [], []
    for label, match, value, required in CMT_SETTINGS:
        found = [("cmt." + k, t) for k, t in sorted(cmt.items()) if match(k)]
        if label != "CMT-PF switch":  # the single-path PF switch is RFC 7829's, not CMT-PF
            found += [(k, t) for k, t in sorted(sctp.items()) if match(k)]
        if not found:
            if required:
                return None, f"this build's sctp.cmt has no key for the {label} (keys: {', '.join(sorted(cmt))})", False
            if label == "retransmission policy":
                unset.append("retransmission policy: sctpsim's default (fast retransmissions to the same "
                             "destination, timeouts to another) against ns-2's RTX-SAME (eCmtRtxPolicy_ 1)")
            elif label != "scheduler":  # round-robin comes with CMT
                unset.append(f"{label}: sctpsim's default (ns-2: {({True: 'on', False: 'off'}).get(value, value)})")
            continue
        key, type_text = found[0]
        sets.append(f"{key}={render(value, type_text)}")
    args = []
    for app in (0, 1):  # the sink, then the sender
        for s in sets:
            args += ["--set", f"apps[{app}].sctp.{s}"]
    note = "no key in this build for the " + "; the ".join(unset) if unset else ""
    policy_set = not any(u.startswith("retransmission policy") for u in unset)
    return args, note, policy_set


def render(value, type_text: str) -> str:
    """A value in the form the key's type takes (boolean or "on"/"off"), as TOML."""
    if isinstance(value, bool):
        if '"on"' in type_text:
            return '"on"' if value else '"off"'
        return "true" if value else "false"
    return f'"{value}"'


def run_sctpsim(case: Case, mode: str, seed: int, work: Path, cmt_args: list[str] | None) -> Metrics:
    out = work / "out"
    cmd = sctpsim_cmd() + ["run", str(HERE / case.toml), "--seed", str(seed), "--out", str(out), "-q"]
    if mode == "cmt":
        cmd += cmt_args or []
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"sctpsim {case.toml} {mode} {seed} failed:\n{proc.stderr}")
    return parse_sctpsim(out)


def parse_sctpsim(out: Path) -> Metrics:
    scalars = {}
    for line in (out / "scalars.csv").read_text().splitlines()[1:]:
        kind, entity, metric, value = line.split(",")[:4]
        scalars[(entity, metric)] = float(value)
    total_bytes = int(scalars[("bulk", "sent_bytes")])
    a_addr = {"10.1.0.1": 1, "10.2.0.1": 2}
    b_addr = {"10.1.1.1": 1, "10.2.1.1": 2}
    sends, arrivals = [], []
    for iface in ("A-eth0", "A-eth1"):
        for t, src, _dst, tsns in read_pcap(out / f"{iface}.pcap"):
            if src in a_addr:
                sends += [(t, a_addr[src], tsn) for tsn in tsns]
    for iface in ("B-eth0", "B-eth1"):
        for t, _src, dst, tsns in read_pcap(out / f"{iface}.pcap"):
            if dst in b_addr:
                arrivals += [(t, tsn) for tsn in tsns]
    sends.sort(key=lambda s: s[0])
    drops = []
    for path, ifaces in ((1, ("A/eth0", "R1/eth0", "R1/eth1", "B/eth0")),
                         (2, ("A/eth1", "R2/eth0", "R2/eth1", "B/eth1"))):
        drops += [path] * int(sum(scalars.get((i, "drops"), 0) for i in ifaces))
    timeouts = int(sum(v for (e, k), v in scalars.items() if k == "t3_timeouts" and e.startswith("bulk/path")))
    m = metrics_from_events(sends, arrivals, drops, timeouts, total_bytes)
    # A packet dropped by the sender's own interface queue never starts transmission, so the
    # capture misses it; take the chunk counts from the sender's per-path counters instead
    # (new and retransmitted user bytes; every chunk carries 1452 bytes but the last).
    for i, path in ((0, 1), (1, 2)):
        new = scalars.get((f"bulk/path{i}", "bytes_sent"), 0)
        rtx = scalars.get((f"bulk/path{i}", "bytes_retransmitted"), 0)
        m.retransmitted[path] = round(rtx / CHUNK)
        m.sent[path] = round(new / CHUNK) + m.retransmitted[path]
    return m


def read_pcap(path: Path):
    """(time s, source, destination, [DATA TSNs]) of each SCTP packet carrying DATA."""
    data = path.read_bytes()
    magic = struct.unpack_from("<I", data, 0)[0]
    scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
    pos = 24
    while pos + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack_from("<IIII", data, pos)
        pkt = data[pos + 16: pos + 16 + caplen]
        pos += 16 + caplen
        if len(pkt) < 20 or pkt[9] != 132:
            continue
        ihl = (pkt[0] & 0x0F) * 4
        src = ".".join(str(b) for b in pkt[12:16])
        dst = ".".join(str(b) for b in pkt[16:20])
        tsns = []
        c = ihl + 12
        while c + 4 <= len(pkt):
            ctype = pkt[c]
            length = struct.unpack_from(">H", pkt, c + 2)[0]
            if length < 4:
                break
            if ctype == 0 and c + 8 <= len(pkt):
                tsns.append(struct.unpack_from(">I", pkt, c + 4)[0])
            c += (length + 3) & ~3
        if tsns:
            yield sec + frac * scale, src, dst, tsns


# ----------------------------------------------------------------------------------------
# Table
# ----------------------------------------------------------------------------------------

# (label, value, digits, is a count: counts whose ns-2 mean is below 5 compare absolutely)
ROWS = [
    ("transfer time (s)", lambda m: m.transfer_time, 3, False),
    ("completion time from start (s)", lambda m: m.completion_time, 3, False),
    ("goodput (Mbit/s)", lambda m: m.goodput_mbps, 3, False),
    ("DATA chunks sent, path 1", lambda m: m.sent[1], 0, True),
    ("DATA chunks sent, path 2", lambda m: m.sent[2], 1, True),
    ("retransmitted chunks, path 1", lambda m: m.retransmitted[1], 1, True),
    ("retransmitted chunks, path 2", lambda m: m.retransmitted[2], 1, True),
    ("packets dropped, path 1", lambda m: m.drops[1], 1, True),
    ("packets dropped, path 2", lambda m: m.drops[2], 1, True),
    ("T3 timeouts", lambda m: m.timeouts, 1, True),
]


def summarise(runs: list[Metrics], get) -> tuple[float, float]:
    values = [float(get(m)) for m in runs]
    if any(math.isnan(v) for v in values):
        return math.nan, math.nan
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, sd


def fmt(mean: float, sd: float, digits: int, n: int) -> str:
    if math.isnan(mean):
        return "did not finish"
    text = f"{mean:.{digits}f}"
    if n > 1:
        text += f" ± {sd:.{digits}f}"
    return text


def diff_text(a: float, sa: float, b: float, sb: float, n: int, count: bool) -> str:
    """sctpsim relative to ns-2; with replications, ± two standard errors of the difference
    (a difference inside it is not distinguishable from the seeds' noise). Counts whose
    ns-2 mean is below 5 are compared in absolute terms."""
    if math.isnan(a) or math.isnan(b):
        return "–"
    se2 = 2 * math.sqrt((sa * sa + sb * sb) / n) if n > 1 else 0.0
    if a == b and se2 == 0:
        return "0"
    if count and abs(a) < 5:
        text = f"{b - a:+.1f} (absolute)"
        return text + (f" ± {se2:.1f}" if n > 1 else "")
    text = f"{(b - a) / a * 100:+.1f} %"
    return text + (f" ± {se2 / abs(a) * 100:.1f} %" if n > 1 else "")


def table(case: Case, mode: str, ns2: list[Metrics], ours: list[Metrics]) -> list[str]:
    n = len(ns2)
    head = "difference (± 2 SE)" if n > 1 else "difference"
    lines = [f"| metric | ns-2.35 | sctpsim | {head} |", "|---|---:|---:|---:|"]
    for label, get, digits, count in ROWS:
        a, sa = summarise(ns2, get)
        if not ours:
            lines.append(f"| {label} | {fmt(a, sa, digits, n)} | not available | – |")
            continue
        b, sb = summarise(ours, get)
        lines.append(f"| {label} | {fmt(a, sa, digits, n)} | {fmt(b, sb, digits, n)} | {diff_text(a, sa, b, sb, n, count)} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 seeds for the lossy case instead of 30")
    ap.add_argument("--seeds", type=int, help="seeds for the lossy case")
    ap.add_argument("--cases", default=",".join(c.name for c in CASES), help="comma-separated case names")
    ap.add_argument("--keep", type=Path, help="keep the traces and pcaps in this directory")
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md", help="where to write the table")
    args = ap.parse_args()

    if not shutil.which("ns"):
        print("compare.py: `ns` not found; install ns-2.35 (Debian: apt-get install -y ns2)", file=sys.stderr)
        return 2
    cmt_args, cmt_missing, policy_set = cmt_overrides(sctpsim_keys())
    # ns-2 runs RTX-SSTHRESH, unless sctpsim cannot be set to it: then RTX-SAME, the nearest
    # to sctpsim's default (they differ only after a timeout).
    ns2_policy = NS2_RTX_SSTHRESH if policy_set or cmt_args is None else NS2_RTX_SAME
    wanted = set(args.cases.split(","))
    work_root = args.keep or Path(tempfile.mkdtemp(prefix="ns2-val-"))
    started = time.monotonic()

    out = ["# ns-2.35 vs sctpsim: side-by-side results", "",
           "Written by `validation/ns2/compare.py`; README.md explains the scenarios, the parameter",
           "mapping and every difference above 10 %. Values are means ± standard deviation over the",
           "seeds (the random-loss case); differences are sctpsim relative to ns-2.", ""]
    for case in CASES:
        if case.name not in wanted:
            continue
        seeds = 1 if case.seeds == 1 else (args.seeds or (3 if args.quick else case.seeds))
        for mode in MODES:
            heading = f"## {case.title} — {'single-path SCTP' if mode == 'sctp' else 'CMT-SCTP'}"
            out += [heading, ""]
            ours_available = not (mode == "cmt" and cmt_args is None)
            ns2, ours = [], []
            for seed in range(1, seeds + 1):
                base = work_root / case.name / mode / f"seed{seed}"
                ns2.append(run_ns2(case, mode, seed, base / "ns2", ns2_policy))
                if ours_available:
                    ours.append(run_sctpsim(case, mode, seed, base / "sctpsim", cmt_args))
                print(f"{case.name}/{mode}/seed {seed}: ns-2 {ns2[-1].transfer_time:.3f} s, sctpsim "
                      + (f"{ours[-1].transfer_time:.3f} s" if ours else "skipped"), file=sys.stderr)
            out += [f"{seeds} seed{'s' if seeds > 1 else ''} (1..{seeds})." if seeds > 1 else "Deterministic (one run).", ""]
            if not ours_available:
                out += [f"sctpsim: {cmt_missing}; ns-2's figures for reference.", ""]
                print(f"{case.name}/{mode}: sctpsim skipped: {cmt_missing}", file=sys.stderr)
            elif mode == "cmt" and cmt_missing:
                out += [f"Settings: {cmt_missing}.", ""]
            out += table(case, mode, ns2, ours) + [""]
    if not args.keep:
        shutil.rmtree(work_root, ignore_errors=True)
    args.out.write_text("\n".join(out).rstrip() + "\n")
    print(f"wrote {args.out} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
