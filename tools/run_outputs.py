#!/usr/bin/env python3
"""Run every example and study scenario, and compare two such sets of outputs.

    python tools/run_outputs.py write DIR [--seed 7]     # sctpsim run each into DIR/<name>
    python tools/run_outputs.py compare DIR_A DIR_B      # exit 1 if any output differs

`write` runs the scenarios that `shared/tools/output-digests` runs (every `examples/*.toml`
and every study scenario except `study.toml`, seed 7 unless told), each with
`sctpsim run FILE --seed N --out DIR/<name> -q`, from the repository root, and two more with
the SCTP packet log (`record.packets`) and every event kind recorded.

`compare` checks each pair of run directories file by file:

- text files (scenario.toml, scalars.csv, ...) and captures (*.pcap): the same bytes;
- Parquet files: the same table, read with pyarrow: the same schema (column names, types,
  nullability, field metadata and the schema metadata a reader sees) and the same values
  (`Table.equals(check_metadata=True)`, NaN equal to NaN), the same row groups' row counts
  not required. Whether the bytes are also identical is reported beside it.

It prints one line per file that differs in bytes, saying whether its contents are equal,
and a last line with the counts; the exit status is 1 if any content differs or a file is
on one side only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def scenarios() -> list[Path]:
    files = sorted(ROOT.glob("examples/*.toml")) + sorted(
        p for p in ROOT.glob("python/sctpsim/studies/*/*.toml") if p.name != "study.toml"
    )
    return sorted(files, key=lambda p: str(p.relative_to(ROOT)))


def run_name(path: Path) -> str:
    return str(path.relative_to(ROOT)).replace("/", "_").replace(".", "_")


#: Runs beyond the plain scenarios: the SCTP packet log (packets.parquet) and a capture.
EXTRA = (
    ("examples/failover.toml", ("record.packets=true",), "failover-packets"),
    ("examples/cmt-two-paths.toml", ("record.packets=true", 'record.events=["fault","drop","enqueue","dequeue","tx","rx","tcp"]'), "cmt-packets"),
)


def write(out: Path, seed: int) -> int:
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    runs = [(f, (), run_name(f)) for f in scenarios()]
    runs += [(ROOT / f, sets, name) for f, sets, name in EXTRA]
    for f, sets, name in runs:
        dest = out / name
        proc = subprocess.run(
            ["sctpsim", "run", str(f), "--seed", str(seed), "--out", str(dest), "-q"]
            + [a for s in sets for a in ("--set", s)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            failed += 1
            print(f"{f.relative_to(ROOT)}: FAILED: {proc.stderr.strip()}")
    print(f"{len(runs) - failed} runs written to {out}, {failed} failed")
    return 1 if failed else 0


def same_table(a: Path, b: Path) -> str | None:
    """None if the two Parquet files hold the same table, else what differs."""
    import pyarrow.parquet as pq

    ta, tb = pq.read_table(a), pq.read_table(b)
    if not ta.schema.equals(tb.schema, check_metadata=True):
        return f"schema differs:\n{ta.schema}\n--- vs ---\n{tb.schema}"
    if ta.num_rows != tb.num_rows:
        return f"{ta.num_rows} rows vs {tb.num_rows}"
    for name in ta.column_names:
        ca, cb = ta.column(name).combine_chunks(), tb.column(name).combine_chunks()
        if not ca.equals(cb):
            # NaN != NaN for Array.equals: compare float columns through their bit patterns.
            import pyarrow as pa

            if pa.types.is_floating(ca.type) and ca.is_null().equals(cb.is_null()):
                na = ca.to_numpy(zero_copy_only=False)
                nb = cb.to_numpy(zero_copy_only=False)
                if na.tobytes() == nb.tobytes():
                    continue
            return f"column {name} differs"
    return None


def compare(a_root: Path, b_root: Path) -> int:
    bad = 0
    same_bytes = 0
    same_content = 0
    names = sorted({p.name for p in a_root.iterdir()} | {p.name for p in b_root.iterdir()})
    for run in names:
        a_dir, b_dir = a_root / run, b_root / run
        files = sorted(
            {p.relative_to(a_dir) for p in a_dir.rglob("*") if p.is_file()}
            | {p.relative_to(b_dir) for p in b_dir.rglob("*") if p.is_file()}
        )
        for rel in files:
            a, b = a_dir / rel, b_dir / rel
            if not (a.is_file() and b.is_file()):
                print(f"{run}/{rel}: only in {'A' if a.is_file() else 'B'}")
                bad += 1
                continue
            if a.read_bytes() == b.read_bytes():
                same_bytes += 1
                continue
            if rel.suffix == ".parquet":
                why = same_table(a, b)
                if why is None:
                    same_content += 1
                    print(f"{run}/{rel}: bytes differ, contents identical")
                    continue
                print(f"{run}/{rel}: CONTENTS DIFFER: {why}")
            else:
                print(f"{run}/{rel}: BYTES DIFFER")
            bad += 1
    print(
        f"{same_bytes} files byte-identical, {same_content} Parquet files with other bytes "
        f"and identical contents, {bad} different"
    )
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("dir", type=Path)
    w.add_argument("--seed", type=int, default=7)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "write":
        return write(args.dir.resolve(), args.seed)
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
