"""The training set of `tools/pgo-install`: short runs of every kind of model sctpsim has.

    python tools/pgo_train.py OUTDIR

Runs with the installed (instrumented) `sctpsim`: every bundled example, each study's
scenarios (the WLAN ones with all 30 background hosts, where the per-frame loops are longest),
the peer benchmark's TCP dumbbell, and a real-mode transfer over loopback. Each run is short:
what the profile needs is which code is hot and which branches are taken, and a few seconds of
each model give that. Fails on the first run that fails.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ROOT / "python" / "sctpsim" / "studies"
EVERY_HOST = [f"nodes[{i}].present=true" for i in range(6, 36)]

# (scenario, overrides): the examples as they are (each runs for seconds), the studies' own.
RUNS: list[tuple[Path, list[str]]] = [(p, []) for p in sorted((ROOT / "examples").glob("*.toml"))]
RUNS += [
    (STUDIES / "wlan-handover" / "scenario-a.toml", ["duration=30s", *EVERY_HOST]),
    (STUDIES / "wlan-handover" / "scenario-a.toml", ["duration=20s", "nodes[3].interfaces[0].wlan.rate=24"]),
    (STUDIES / "wlan-handover" / "scenario-b.toml", ["duration=30s", *EVERY_HOST]),
    (STUDIES / "failover-tuning" / "wifi-lte.toml", []),
    (STUDIES / "failover-tuning" / "wifi-lte.toml", ["faults=[]", "duration=100s"]),
    (STUDIES / "cc-new-stage" / "bottleneck.toml", []),
    (STUDIES / "cmt-aqm" / "symmetric.toml", []),
    (STUDIES / "cmt-aqm" / "asymmetric.toml", []),
    (STUDIES / "cmt-aqm" / "pf-failure.toml", []),
    (STUDIES / "datacenter" / "datacenter.toml", []),
    (ROOT / "benches" / "peers" / "tcp-dumbbell-30.toml", ["duration=20s"]),
]


def sctpsim(*args: str, **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "sctpsim", *args], check=True, **kw)  # type: ignore[call-overload]


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def real_mode(out: Path) -> None:
    """A 50 MB transfer over loopback to a sink, both ends in real mode (the sender's INIT is
    retransmitted if the sink is not listening yet)."""
    port = str(free_udp_port())
    sink = subprocess.Popen(
        [sys.executable, "-m", "sctpsim", "real", "sink", "--bind", "127.0.0.1", "--udp-port", port,
         "--once", "--quiet", "--out", str(out / "real-sink")],
        stdout=subprocess.DEVNULL,
    )
    try:
        sctpsim("real", "send", "--bind", "127.0.0.1", "--udp-port", "0", "--peer", "127.0.0.1",
                "--peer-udp-port", port, "--bytes", "50MB", "--message-size", "8KiB", "--quiet",
                "--out", str(out / "real-send"), stdout=subprocess.DEVNULL)
        if sink.wait(timeout=60) != 0:
            raise SystemExit(f"pgo_train: the real-mode sink ended with {sink.returncode}")
    finally:
        if sink.poll() is None:
            sink.kill()


def main() -> None:
    out = Path(sys.argv[1])
    for i, (scenario, overrides) in enumerate(RUNS):
        sets = [a for o in overrides for a in ("--set", o)]
        print(f"  {scenario.relative_to(ROOT)} {' '.join(o for o in overrides if 'present' not in o)}", flush=True)
        sctpsim("run", str(scenario), "--out", str(out / f"{i:02}"), "--quiet", *sets, stdout=subprocess.DEVNULL)
    print("  real mode over loopback", flush=True)
    real_mode(out)


if __name__ == "__main__":
    main()
