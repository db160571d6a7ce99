"""Loopback throughput and CPU cost of ``sctpsim real`` against usrsctp's ``tsctp``, beside
the loopback UDP ceiling, for 1 KiB and 8 KiB messages (a benchmark, not a test).

    python benches/real/run.py [--bytes 100MB] [--sizes 1024,8192] [--pmtus 1500,9000] [--seconds 3]
                               [--repeat 1]

For each message size:

* sctpsim -> sctpsim: ``sctpsim real sink --once`` and ``sctpsim real send --bytes N``
  over 127.0.0.1 (the installed extension's build), with each path MTU of ``--pmtus``
  (1500: Ethernet-sized packets; loopback's own MTU is 65536). Throughput is the sink's goodput; CPU
  time is each side's event loop (``getrusage(RUSAGE_THREAD)``, the ``real/*/cpu_*``
  scalars), so the interpreter's start-up is not counted.
* usrsctp -> usrsctp: ``tsctp`` as server and as client (``-l SIZE -n N/SIZE``), UDP
  encapsulation. Throughput is what the server prints (bytes over the time from its first
  read to the end of the association); CPU time is each process's (``os.wait4``), which
  includes usrsctp's own timer thread and, in Debian's build, its debug log of every packet
  (written to a file here).
* the UDP ceiling: ``benches/real/udp-ceiling`` sends datagrams of the message size from one
  thread to another as fast as the socket takes them, and counts what arrives.

Prints a Markdown table (for BENCHMARKS.md) with the machine, its load, and the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TSCTP = Path("/usr/lib/usrsctp/tsctp")
TSCTP_RESULT = re.compile(r"^(\d+), (\d+), (\d+), (\d+), ([\d.]+), ([\d.]+), (\d+)$", re.M)
CEILING_TARGET = Path(tempfile.gettempdir()) / "sctpsim-udp-ceiling-target"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", 0))
        return int(s.getsockname()[1])


def scalars(run_dir: Path) -> dict[str, float]:
    import csv

    with (run_dir / "scalars.csv").open(newline="") as f:
        return {f"{r['kind']}/{r['entity']}/{r['metric']}": float(r["value"]) for r in csv.DictReader(f)}


def sctpsim_pair(size: int, nbytes: int, pmtu: int, work: Path) -> dict[str, float]:
    port = free_port()
    real = [sys.executable, "-m", "sctpsim", "real"]
    mtu = ["--set", f"sctp.pmtu={pmtu}"]
    sink = subprocess.Popen(
        [*real, "sink", "--bind", "127.0.0.1", "--udp-port", str(port), "--once", "--out", str(work / "sink"), *mtu],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert sink.stderr is not None
    sink.stderr.readline()  # the first progress line: bound and listening
    subprocess.run(
        [*real, "send", "--bind", "127.0.0.1", "--udp-port", "0", "--peer", "127.0.0.1", "--peer-udp-port",
         str(port), "--bytes", str(nbytes), "--message-size", str(size), "-q", "--out", str(work / "send"), *mtu],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    sink.wait(120)
    k, s = scalars(work / "sink"), scalars(work / "send")
    delivered = k["sctp/sink/delivered_bytes"]
    assert delivered == nbytes, delivered
    return {
        "mbps": k["sctp/sink/goodput"] / 1e6,
        "send_ns": s["real/send/cpu_per_byte"] * 1e9,
        "recv_ns": k["real/sink/cpu_per_byte"] * 1e9,
    }


def usrsctp_pair(size: int, nbytes: int, work: Path) -> dict[str, float] | None:
    if not TSCTP.exists():
        return None
    server_udp, client_udp = free_port(), free_port()
    log = (work / "tsctp-server.log").open("w")
    server = subprocess.Popen([str(TSCTP), "-E", str(server_udp), "-p", "5001"], stdout=log, stderr=subprocess.STDOUT)
    time.sleep(0.5)
    count = nbytes // size
    client = subprocess.Popen(
        [str(TSCTP), "-E", str(client_udp), "-U", str(server_udp), "-p", "5001", "-l", str(size), "-n", str(count),
         "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _, _, client_usage = os.wait4(client.pid, 0)
    client.returncode = 0
    deadline = time.monotonic() + 60
    text = ""
    while time.monotonic() < deadline:
        log.flush()
        text = (work / "tsctp-server.log").read_text(errors="replace")
        if TSCTP_RESULT.search(text):
            break
        time.sleep(0.2)
    server.kill()
    _, _, server_usage = os.wait4(server.pid, 0)
    server.returncode = -9
    log.close()
    m = TSCTP_RESULT.search(text)
    if m is None:
        return None
    received, seconds = int(m.group(4)), float(m.group(5))
    cpu = lambda u: u.ru_utime + u.ru_stime  # noqa: E731
    return {
        "mbps": received * 8 / seconds / 1e6,
        "send_ns": cpu(client_usage) / received * 1e9,
        "recv_ns": cpu(server_usage) / received * 1e9,
    }


def ceiling(size: int, seconds: float) -> dict[str, float]:
    manifest = HERE / "udp-ceiling" / "Cargo.toml"
    env = {**os.environ, "CARGO_TARGET_DIR": str(CEILING_TARGET)}
    subprocess.run(["cargo", "build", "-q", "--release", "--manifest-path", str(manifest)], check=True, env=env)
    out = subprocess.run(
        [str(CEILING_TARGET / "release" / "udp-ceiling"), str(size), str(seconds)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    r = json.loads(out)
    return {
        "mbps": r["bytes"] * 8 / r["seconds"] / 1e6,
        "send_ns": r["sender_cpu"] / max(r["bytes"], 1) * 1e9,
        "recv_ns": r["receiver_cpu"] / max(r["bytes"], 1) * 1e9,
        "delivered": r["received"] / max(r["sent"], 1),
    }


def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*([KMG]?)B?", text.strip().upper())
    if m is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size")
    return int(m.group(1)) * {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}[m.group(2)]


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model or platform.processor()}, {os.cpu_count()} CPUs, Linux {platform.release()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bytes", type=parse_size, default=parse_size("100MB"))
    ap.add_argument("--sizes", default="1024,8192")
    ap.add_argument("--seconds", type=float, default=3.0, help="length of each UDP ceiling run")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the table shows the best throughput")
    ap.add_argument("--pmtus", default="1500,9000", help="path MTUs sctpsim runs with (sctp.pmtu)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            runs = [
                (f"sctpsim real, PMTU {pmtu}", lambda i, m=pmtu: sctpsim_pair(size, args.bytes, m, Path(tmp) / f"s{size}-{i}"))
                for pmtu in (int(p) for p in args.pmtus.split(","))
            ]
            runs += [
                ("usrsctp tsctp", lambda i: usrsctp_pair(size, args.bytes, Path(tmp) / f"u{size}-{i}")),
                ("UDP ceiling", lambda i: ceiling(size, args.seconds)),
            ]
            for name, run in runs:
                results = []
                for i in range(args.repeat):
                    (Path(tmp) / f"s{size}-{i}").mkdir(exist_ok=True)
                    (Path(tmp) / f"u{size}-{i}").mkdir(exist_ok=True)
                    r = run(i)
                    if r is not None:
                        results.append(r)
                if results:
                    best = max(results, key=lambda r: r["mbps"])
                    rows.append((size, name, best))
                    print(f"# {size} B {name}: {best}", file=sys.stderr)
    load_after = os.getloadavg()
    print(f"Machine: {machine()}. Load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after.")
    print(f"{args.bytes / 1e6:g} MB per SCTP transfer; best of {args.repeat}.\n")
    print("| message | implementation | throughput Mbit/s | sender CPU ns/byte | receiver CPU ns/byte |")
    print("|---:|---|---:|---:|---:|")
    for size, name, r in rows:
        extra = f" ({r['delivered']:.0%} of datagrams arrived)" if "delivered" in r else ""
        print(f"| {size} B | {name}{extra} | {r['mbps']:,.0f} | {r['send_ns']:.2f} | {r['recv_ns']:.2f} |")


if __name__ == "__main__":
    main()
