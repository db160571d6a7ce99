#!/usr/bin/env python3
"""Time sctpsim against ns-2.35 on the same scenarios, and compare their results.

Usage (from anywhere; needs sctpsim installed, installs Debian's ns2 if `ns` is missing):

    python benches/peers/run.py                 # 5 timed runs of each tool per scenario
    python benches/peers/run.py --runs 1        # a quick check of the harness
    python benches/peers/run.py --scenarios failover,tcp --no-results

Scenarios (see README.md): `failover` and `stable` (the failover-tuning study's
wifi-lte.toml, with the Wi-Fi failure at 100 s and without it, 300 simulated seconds) and
`tcp` (30 TCP NewReno uploads through one bottleneck, 60 s).

Timing: each timed run is one process, started alternately (ns-2 first in odd rounds,
sctpsim first in even ones), writing nothing but what the tool always writes (sctpsim its
results directory, ns-2 no trace). Per run:

- whole process: wall time from start to exit, as a user sees it;
- simulation only: ns-2: the wall-clock microseconds the Tcl script prints just before
  `$ns run` and when the finish procedure runs (start-up, topology set-up and exit are
  outside); sctpsim: the wall time of the core's run call (`sctpsim._core.run`, which
  builds and runs the simulation, writes the results files but scenario.toml and returns
  the results), measured inside the `sctpsim run` process by `sctpsim_timed.py` (start-up,
  argument handling and writing scenario.toml are outside);
- peak RSS: the child's ru_maxrss from wait4().

A "start-up" row times `ns startup.tcl` (ns-2 loads and exits) against `sctpsim --version`.

Results: one more run of each tool with traces (not timed), measured as described in
README.md; the harness prints each metric for both and the difference.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
STUDY_TOML = ROOT / "python" / "sctpsim" / "studies" / "failover-tuning" / "wifi-lte.toml"
# User bytes per DATA chunk in both tools (MTU 1500 - IP 20 - SCTP 12 - DATA header 16).
CHUNK = 1452
APP_START = 0.5
FAILURE_AT = 100.0
# Path.Max.Retrans of the scenario: the primary is inactive at its (PMR + 1)-th timeout.
PMR = 5


@dataclass(frozen=True)
class Scenario:
    """One scenario as an ns-2 command and an sctpsim command."""

    name: str
    title: str
    tcl: str
    ns2_args: tuple[str, ...]  # after the script: mode and the like, before OUTDIR
    toml: Path
    overrides: tuple[str, ...]  # sctpsim --set arguments


SCENARIOS = [
    Scenario("failover", "failover-tuning, Wi-Fi fails at 100 s (300 s)", "wifi-lte.tcl", ("failover",),
             STUDY_TOML, ()),
    Scenario("stable", "failover-tuning, no failure (300 s)", "wifi-lte.tcl", ("stable",), STUDY_TOML,
             ("faults=[]",)),
    Scenario("tcp", "30 TCP NewReno flows, one bottleneck (60 s)", "tcp-dumbbell-30.tcl", (),
             HERE / "tcp-dumbbell-30.toml", ()),
]


# ----------------------------------------------------------------------------------------
# Parameter equivalence: both sides' links from one table
# ----------------------------------------------------------------------------------------

# scenario file -> [(sctpsim link name, direction "fwd" (ends[0] -> ends[1]) or "rev",
#                    ns-2 node variable from, to)]: the same link on both sides.
LINK_MAP = {
    "wifi-lte": [
        ("wifi", "fwd", "client_if0", "ap_wifi"), ("wifi", "rev", "ap_wifi", "client_if0"),
        ("wired-1", "fwd", "ap_wifi", "server_if0"), ("wired-1", "rev", "server_if0", "ap_wifi"),
        ("lte", "fwd", "client_if1", "ap_lte"), ("lte", "rev", "ap_lte", "client_if1"),
        ("wired-2", "fwd", "ap_lte", "server_if1"), ("wired-2", "rev", "server_if1", "ap_lte"),
    ],
    "tcp-dumbbell-30": [
        ("bottleneck", "fwd", "r1", "r2"), ("bottleneck", "rev", "r2", "r1"),
        ("sink", "fwd", "r2", "d"), ("sink", "rev", "d", "r2"),
        ("group:src", "fwd", "h", "r1"), ("group:src", "rev", "r1", "h"),
    ],
}

_UNITS = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def rate_bps(text: str) -> float:
    """'20.79Mbps' (sctpsim) or '20.79Mb' (ns-2) -> bit/s."""
    m = re.fullmatch(r"([\d.]+)\s*([kKMG]?)b(?:ps|it/s)?", text.strip())
    if not m:
        raise ValueError(f"not a rate: {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def delay_s(text: str) -> float:
    """'31.65ms' -> 0.03165."""
    m = re.fullmatch(r"([\d.]+)\s*(ms|us|s)", text.strip())
    if not m:
        raise ValueError(f"not a delay: {text!r}")
    return float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[m.group(2)]


def sctpsim_links(toml_path: Path) -> dict[tuple[str, str], tuple[float, float, int]]:
    """(link name, direction) -> (rate bit/s, delay s, queue limit packets) of a scenario."""
    doc = tomllib.loads(toml_path.read_text())
    out = {}
    for link in doc.get("links", []):
        name = link["name"]
        queue = int(link.get("queue", {}).get("limit", 100))
        fwd = (rate_bps(link["rate"]), delay_s(link["delay"]), queue)
        rev = link.get("reverse", {})
        out[(name, "fwd")] = fwd
        out[(name, "rev")] = (rate_bps(rev.get("rate", link["rate"])), delay_s(rev.get("delay", link["delay"])),
                              int(rev.get("queue", {}).get("limit", queue)))
    for group in doc.get("groups", []):
        link = group.get("link", {})
        spec = (rate_bps(link.get("rate", "100Mbps")), delay_s(link.get("delay", "1ms")),
                int(link.get("queue", {}).get("limit", 100)))
        out[(f"group:{group['name']}", "fwd")] = spec
        out[(f"group:{group['name']}", "rev")] = spec
    return out


def ns2_links(tcl_path: Path) -> dict[tuple[str, str], tuple[float, float, int]]:
    """(node from, node to) -> (rate bit/s, delay s, queue limit) of an ns-2 script.

    Reads the `[list $a $b RATE DELAY]` entries of the script's link tables; a duplex
    table (one whose links are built with duplex-link) gives both directions. The queue
    limit is the script's `queue-limit ... N` (one value per script here)."""
    text = tcl_path.read_text()
    limits = set(re.findall(r"queue-limit \$\w+ \$\w+ (\d+)", text))
    if len(limits) != 1:
        raise ValueError(f"{tcl_path.name}: expected one queue-limit value, found {sorted(limits)}")
    limit = int(limits.pop())
    duplex = "duplex-link" in text
    out = {}
    for a, b, rate, delay in re.findall(r"\[list \$(\w+) \$(\w+) ([\d.]+[kMG]?b) ([\d.]+m?s)\]", text):
        spec = (rate_bps(rate), delay_s(delay), limit)
        out[(a, b)] = spec
        if duplex:
            out[(b, a)] = spec
    return out


def link_table(scenario: str) -> list[tuple[str, str, tuple, tuple]]:
    """[(sctpsim link and direction, ns-2 link, sctpsim values, ns-2 values)] of one
    scenario ("wifi-lte" or "tcp-dumbbell-30"), for a check that they are equal."""
    toml = STUDY_TOML if scenario == "wifi-lte" else HERE / f"{scenario}.toml"
    ours = sctpsim_links(toml)
    theirs = ns2_links(HERE / f"{scenario}.tcl")
    rows = []
    for name, direction, a, b in LINK_MAP[scenario]:
        rows.append((f"{name} {direction}", f"{a}->{b}", ours.get((name, direction)), theirs.get((a, b))))
    return rows


# ----------------------------------------------------------------------------------------
# Running and timing
# ----------------------------------------------------------------------------------------


@dataclass
class Timing:
    """One timed run."""

    wall: float  # whole process, s
    sim: float  # simulation only, s
    rss_mib: float  # peak resident set size


def ensure_ns2() -> str:
    """The path of `ns`, installing Debian's ns2 package if it is missing."""
    found = shutil.which("ns")
    if found:
        return found
    print("ns (ns-2.35) not found; installing the Debian package ns2 ...", flush=True)
    apt = shutil.which("apt-get")
    sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if apt is None or sudo is None:
        sys.exit("cannot install ns-2: no apt-get (or not root and no sudo); "
                 "install Debian/Ubuntu's package ns2 (`apt-get install ns2`) and retry")
    for cmd in ([*sudo, apt, "install", "-y", "ns2"], [*sudo, apt, "update"], [*sudo, apt, "install", "-y", "ns2"]):
        subprocess.run(cmd, check=False, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        found = shutil.which("ns")
        if found:
            return found
    sys.exit("installing ns2 with apt-get failed (see the messages above); install the package ns2 and retry")


def timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, str, str]:
    """Run cmd; (wall s, peak RSS MiB, stdout, stderr). Fails on a non-zero exit."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{stderr[-2000:]}")
    # Linux reports ru_maxrss in KiB.
    return wall, usage.ru_maxrss / 1024, stdout, stderr


def ns2_sim_seconds(stdout: str) -> float:
    """The simulation's wall time from the script's `sim-start US` / `sim-end US` lines."""
    start = re.search(r"^sim-start (\d+)$", stdout, re.M)
    end = re.search(r"^sim-end (\d+)$", stdout, re.M)
    if not (start and end):
        raise ValueError("no sim-start / sim-end lines in ns-2's output")
    return (int(end.group(1)) - int(start.group(1))) / 1e6


def sctpsim_sim_seconds(stderr: str) -> float:
    """The core's run time from sctpsim_timed.py's `sctpsim-core-run S` line."""
    m = re.search(r"^sctpsim-core-run ([\d.eE+-]+)$", stderr, re.M)
    if not m:
        raise ValueError("no sctpsim-core-run line in sctpsim_timed.py's output")
    return float(m.group(1))


def ns2_command(s: Scenario, outdir: Path, trace: bool) -> list[str]:
    return ["ns", str(HERE / s.tcl), *s.ns2_args, str(outdir), *(["trace"] if trace else [])]


def sctpsim_command(s: Scenario, outdir: Path, extra: tuple[str, ...] = ()) -> list[str]:
    sets = [a for o in (*s.overrides, *extra) for a in ("--set", o)]
    return [sys.executable, str(HERE / "sctpsim_timed.py"), "run", str(s.toml), "--out", str(outdir), "-q", *sets]


def time_ns2(s: Scenario, work: Path) -> Timing:
    work.mkdir(parents=True, exist_ok=True)
    wall, rss, out, _ = timed(ns2_command(s, work, trace=False))
    return Timing(wall, ns2_sim_seconds(out), rss)


def time_sctpsim(s: Scenario, work: Path) -> Timing:
    wall, rss, _, err = timed(sctpsim_command(s, work / "out"))
    return Timing(wall, sctpsim_sim_seconds(err), rss)


def time_startup(ns2_first: bool) -> tuple[Timing, Timing]:
    """Start-up alone: `ns startup.tcl` (loads ns-2 and exits) and `sctpsim --version`;
    (ns-2, sctpsim)."""
    cmds = [["ns", str(HERE / "startup.tcl")], [sys.executable, str(HERE / "sctpsim_timed.py"), "--version"]]
    out = {}
    for k in ((0, 1) if ns2_first else (1, 0)):
        wall, rss, _, _ = timed(cmds[k])
        out[k] = Timing(wall, float("nan"), rss)
    return out[0], out[1]


def spread(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def timing_table(results: dict[str, tuple[list[Timing], list[Timing]]], runs: int) -> list[str]:
    lines = [f"Timing: {runs} run(s) of each tool per scenario, alternating; min / median / max.",
             "ratio = ns-2 median / sctpsim median (above 1: sctpsim is faster; for memory: uses less).", "",
             "| scenario | measure | ns-2.35 | sctpsim | ratio |", "|---|---|---|---|---|"]
    for name, (ns2, ours) in results.items():
        for label, get, unit, digits in (("whole process", lambda t: t.wall, "s", 3),
                                         ("simulation only", lambda t: t.sim, "s", 3),
                                         ("peak RSS", lambda t: t.rss_mib, "MiB", 1)):
            if name == "start-up" and label == "simulation only":
                continue
            a, b = spread([get(t) for t in ns2]), spread([get(t) for t in ours])
            fmt = lambda v: " / ".join(f"{x:.{digits}f}" for x in v) + f" {unit}"  # noqa: E731
            ratio = a[1] / b[1] if b[1] > 0 else float("nan")
            lines.append(f"| {name} | {label} | {fmt(a)} | {fmt(b)} | {ratio:.2f} |")
    return lines


# ----------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------


def read_scalars(out: Path) -> dict[tuple[str, str], float]:
    with open(out / "scalars.csv", newline="") as f:
        return {(r["entity"], r["metric"]): float(r["value"]) for r in csv.DictReader(f)}


def parse_ns2_trace_sctp(lines, nodes: dict[str, int]) -> dict:
    """Measures of one ns-2 wifi-lte trace (the data-direction links, trace-queue format
    with show_sctphdr_: ev time from to sctp size flags fid src dst seq TSN uid ...)."""
    client = {nodes["client_if0"]: 0, nodes["client_if1"]: 1}
    server = {nodes["server_if0"], nodes["server_if1"]}
    seen, received = set(), set()
    sends = {0: [], 1: []}  # path -> [(time, tsn)] of DATA transmissions
    retransmitted = {0: 0, 1: 0}
    dropped = set()
    last_arrival = 0.0
    for line in lines:
        p = line.split()
        if len(p) < 13 or p[4] != "sctp":
            continue
        ev = p[0]
        if ev == "d":
            dropped.add(p[12])  # one line per chunk: each packet (uid) once
            continue
        if not p[6].endswith("D"):
            continue
        src, dst, tsn = int(p[2]), int(p[3]), int(p[11])
        if ev == "+" and src in client:
            path = client[src]
            if tsn in seen:
                retransmitted[path] += 1
            seen.add(tsn)
            sends[path].append((float(p[1]), tsn))
        elif ev == "r" and dst in server:
            if tsn not in received:
                received.add(tsn)
                last_arrival = float(p[1])
    return {"received": len(received), "last_arrival": last_arrival, "sends": sends,
            "retransmitted": retransmitted, "drops": len(dropped)}


def ns2_sctp_results(work: Path, failover: bool) -> dict[str, float]:
    nodes = {k: int(v) for k, v in (line.split() for line in (work / "nodes.txt").read_text().splitlines())}
    with open(work / "out.tr") as f:
        t = parse_ns2_trace_sctp(f, nodes)
    agent = (work / "agent.tr").read_bytes().decode("latin-1")
    timeouts = sum(int(x) for x in re.findall(r"timeoutCount: (\d+)", agent))
    reverse = int((work / "drops.txt").read_text().split()[1])
    res = {
        "delivered (MB)": t["received"] * CHUNK / 1e6,
        "goodput (Mbit/s)": t["received"] * CHUNK * 8 / (t["last_arrival"] - APP_START) / 1e6,
        "DATA chunks sent on Wi-Fi": len(t["sends"][0]),
        "DATA chunks sent on LTE": len(t["sends"][1]),
        "retransmitted chunks": t["retransmitted"][0] + t["retransmitted"][1],
        "timeouts (ns-2: T3 and heartbeat)": timeouts,
        "packets dropped": t["drops"] + reverse,
    }
    if failover:
        # The primary is marked inactive at its (PMR + 1)-th timeout after the failure;
        # timeouts.txt has the polled times (1 ms resolution) of each change of the count.
        polled = [(float(a), int(b)) for a, b in (line.split() for line in (work / "timeouts.txt").read_text().splitlines())]
        before = max((n for tm, n in polled if tm <= FAILURE_AT), default=0)
        marked = next((tm for tm, n in polled if tm > FAILURE_AT and n >= before + PMR + 1), float("nan"))
        # The timeout's retransmission goes to LTE at the exact instant; take that time.
        lte = t["sends"][1]
        exact = max((tm for tm, _ in lte if marked - 0.002 < tm <= marked), default=marked)
        res["failover time (s)"] = exact - FAILURE_AT
        # New data moves: the first LTE transmission after that instant.
        moved = next((tm for tm, _ in lte if tm > exact + 1e-9), float("nan"))
        res["data moved to LTE (s)"] = moved - FAILURE_AT
    return res


def sctpsim_sctp_results(out: Path, failover: bool) -> dict[str, float]:
    s = read_scalars(out)
    path = lambda i, k: s.get((f"upload/path{i}", k), 0.0)  # noqa: E731
    drops = sum(v for (e, k), v in s.items() if k == "drops" and e.count("/") == 1 and not e.startswith("upload"))
    res = {
        "delivered (MB)": s[("sink", "delivered_bytes")] / 1e6,
        "goodput (Mbit/s)": s[("sink", "delivered_bytes")] * 8 / (s[("sink", "last_delivery_at")] - APP_START) / 1e6,
        "DATA chunks sent on Wi-Fi": round((path(0, "bytes_sent") + path(0, "bytes_retransmitted")) / CHUNK),
        "DATA chunks sent on LTE": round((path(1, "bytes_sent") + path(1, "bytes_retransmitted")) / CHUNK),
        "retransmitted chunks": s[("upload", "fast_retransmissions")] + s[("upload", "timeout_retransmissions")],
        "timeouts (ns-2: T3 and heartbeat)": s[("upload", "t3_timeouts")],
        "packets dropped": drops,
    }
    if failover:
        res["failover time (s)"] = s[("upload", "failover_time")]
        res["data moved to LTE (s)"] = s[("upload", "data_moved_time")]
    return res


def ns2_tcp_results(work: Path) -> dict[str, float]:
    flows = [line.split() for line in (work / "flows.txt").read_text().splitlines()]
    duration = 60.0
    rates = [int(acked) * 8 / (duration - float(start)) / 1e6 for start, acked, _, _ in flows]
    drops = {k: int(v) for k, v in (line.split() for line in (work / "drops.txt").read_text().splitlines())}
    return {
        "aggregate goodput (Mbit/s)": sum(rates),
        "Jain's fairness index": jain(rates),
        "min flow goodput (Mbit/s)": min(rates),
        "max flow goodput (Mbit/s)": max(rates),
        "retransmitted segments": sum(int(f[2]) for f in flows),
        "retransmission timeouts": sum(int(f[3]) for f in flows),
        "packets dropped": sum(drops.values()),
    }


def sctpsim_tcp_results(out: Path) -> dict[str, float]:
    s = read_scalars(out)
    rates = [v / 1e6 for (e, k), v in sorted(s.items()) if k == "goodput" and re.fullmatch(r"src-\d+", e)]
    get = lambda metric: sum(v for (e, k), v in s.items() if k == metric and re.fullmatch(r"src-\d+", e))  # noqa: E731
    drops = sum(v for (e, k), v in s.items() if k == "drops" and e.count("/") == 1)
    return {
        "aggregate goodput (Mbit/s)": sum(rates),
        "Jain's fairness index": jain(rates),
        "min flow goodput (Mbit/s)": min(rates),
        "max flow goodput (Mbit/s)": max(rates),
        "retransmitted segments": get("retransmissions"),
        "retransmission timeouts": get("timeouts"),
        "packets dropped": drops,
    }


def jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if xs else float("nan")


def results_of(s: Scenario, work: Path) -> tuple[dict[str, float], dict[str, float]]:
    """One traced run of each tool; (ns-2 measures, sctpsim measures)."""
    (work / "ns2").mkdir(parents=True, exist_ok=True)
    subprocess.run(ns2_command(s, work / "ns2", trace=True), check=True, capture_output=True)
    out = work / "sctpsim"
    subprocess.run(sctpsim_command(s, out), check=True, capture_output=True)
    if s.name == "tcp":
        return ns2_tcp_results(work / "ns2"), sctpsim_tcp_results(out)
    failover = s.name == "failover"
    return ns2_sctp_results(work / "ns2", failover), sctpsim_sctp_results(out, failover)


def results_table(s: Scenario, ns2: dict[str, float], ours: dict[str, float]) -> list[str]:
    lines = [f"### {s.title}", "", "| measure | ns-2.35 | sctpsim | difference |", "|---|---|---|---|"]
    for key, a in ns2.items():
        b = ours.get(key, float("nan"))
        if a != a or b != b:
            diff = ""
        elif a == 0:
            diff = f"{b - a:+g}"
        else:
            diff = f"{(b - a) / abs(a) * 100:+.1f} %" + (" **>5 %**" if abs(b - a) / abs(a) > 0.05 else "")
        lines.append(f"| {key} | {num(a)} | {num(b)} | {diff} |")
    return lines


def num(v: float) -> str:
    if v != v:
        return "n/a"
    return f"{v:,.0f}" if float(v).is_integer() and abs(v) >= 10 else f"{v:.3f}"


# ----------------------------------------------------------------------------------------


def machine() -> str:
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    ns_version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "ns2"], capture_output=True,
                                text=True).stdout or "?"
    sctpsim_version = subprocess.run([sys.executable, "-m", "sctpsim", "--version"], capture_output=True,
                                     text=True).stdout.strip()
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{platform.node()}: {cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
            f"load average {load}; ns2 {ns_version}; {sctpsim_version}; Python {platform.python_version()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each tool per scenario (default 5)")
    ap.add_argument("--scenarios", default=",".join(s.name for s in SCENARIOS),
                    help="comma-separated subset of " + ", ".join(s.name for s in SCENARIOS))
    ap.add_argument("--no-timing", action="store_true", help="compare results only")
    ap.add_argument("--no-results", action="store_true", help="time only")
    ap.add_argument("--keep", type=Path, help="keep every output and trace in this directory")
    args = ap.parse_args()
    wanted = args.scenarios.split(",")
    unknown = set(wanted) - {s.name for s in SCENARIOS}
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    chosen = [s for s in SCENARIOS if s.name in wanted]
    ensure_ns2()
    print(f"machine: {machine()}", flush=True)

    work = args.keep or Path(tempfile.mkdtemp(prefix="peers-"))
    try:
        if not args.no_timing:
            timings: dict[str, tuple[list[Timing], list[Timing]]] = {"start-up": ([], [])}
            for i in range(args.runs):
                pair = time_startup(ns2_first=i % 2 == 0)
                timings["start-up"][0].append(pair[0])
                timings["start-up"][1].append(pair[1])
            for s in chosen:
                ns2, ours = [], []
                for i in range(args.runs):
                    order = ("ns2", "sctpsim") if i % 2 == 0 else ("sctpsim", "ns2")
                    for tool in order:
                        w = work / "timing" / s.name / f"{tool}-{i}"
                        if tool == "ns2":
                            ns2.append(time_ns2(s, w))
                        else:
                            ours.append(time_sctpsim(s, w))
                    print(f"  {s.name} run {i + 1}/{args.runs}: ns-2 {ns2[-1].wall:.2f} s, "
                          f"sctpsim {ours[-1].wall:.2f} s", file=sys.stderr, flush=True)
                    if not args.keep:
                        shutil.rmtree(work / "timing" / s.name, ignore_errors=True)
                timings[s.name] = (ns2, ours)
            print()
            print("\n".join(timing_table(timings, args.runs)))
        if not args.no_results:
            print()
            print("Results (one traced run of each tool; difference = (sctpsim - ns-2) / ns-2):")
            for s in chosen:
                ns2_res, ours_res = results_of(s, work / "results" / s.name)
                print()
                print("\n".join(results_table(s, ns2_res, ours_res)))
                if not args.keep:
                    shutil.rmtree(work / "results" / s.name, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
