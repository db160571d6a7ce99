"""The result files the core writes hold exactly what pandas and pyarrow wrote before.

``sctpsim._core.write_results`` (and ``_core.run`` with an output directory) writes
scalars.csv and the Parquet tables in Rust. The reference here is the Python writer they
replaced, kept in this file: ``DataFrame.to_csv`` for the scalars (same bytes) and pyarrow's
``write_table`` from the DataFrames of :class:`RunResult` for the tables (same schema as
readers see it, same values; other bytes).
"""

from __future__ import annotations

import math
import random
import struct
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sctpsim import _core
from sctpsim.results import RunResult

from test_results import make_empty_raw, make_raw

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------- the former writer


def reference_csv(result: RunResult) -> bytes:
    """scalars.csv as the Python writer made it."""
    text = result.scalar_table.to_csv(index=False, lineterminator="\n", na_rep="NaN")
    return text.encode("utf-8")


def reference_parquet(df: pd.DataFrame, path: Path) -> None:
    """A table as the Python writer wrote it (pandas metadata dropped, text as string)."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    schema = pa.schema(
        [
            pa.field(
                f.name,
                pa.string()
                if pa.types.is_string(f.type)
                or pa.types.is_large_string(f.type)
                or getattr(pa.types, "is_string_view", lambda _t: False)(f.type)
                else f.type,
                nullable=True,
            )
            for f in table.schema
        ]
    )
    table = table.cast(schema).replace_schema_metadata(None)
    pq.write_table(table, path, compression="zstd", use_dictionary=True, write_statistics=True)


def assert_same_table(ours: Path, reference: Path) -> None:
    a, b = pq.read_table(ours), pq.read_table(reference)
    assert a.schema.equals(b.schema, check_metadata=True), f"{a.schema}\n---\n{b.schema}"
    assert a.num_rows == b.num_rows
    for name in a.column_names:
        ca, cb = a.column(name).combine_chunks(), b.column(name).combine_chunks()
        assert ca.null_count == cb.null_count, name
        if pa.types.is_floating(ca.type):
            # NaN is not equal to itself: compare the bits (nulls as NaN).
            na = ca.to_numpy(zero_copy_only=False)
            nb = cb.to_numpy(zero_copy_only=False)
            assert na.tobytes() == nb.tobytes(), name
            assert ca.is_null().equals(cb.is_null()), name
        else:
            assert ca.equals(cb), name
    # And through pandas, as users read them.
    pd.testing.assert_frame_equal(pd.read_parquet(ours), pd.read_parquet(reference))


# ------------------------------------------------------------------ raw data


def awkward_scalars(n: int = 3000, seed: int = 5) -> dict[str, list[Any]]:
    """Values across the whole float range and text that needs quoting."""
    rng = random.Random(seed)
    special = [
        0.0, -0.0, 1.0, 0.1, 1e-4, 1e-5, 1.5e-5, 1e15, 1e16, 9999999999999998.0,
        1234567890123456.0, 1.2345678901234568e17, 5e-324, 1.7976931348623157e308,
        math.inf, -math.inf, math.nan, 2.0**53, 0.30000000000000004, -123.456,
    ]
    values = special + [
        rng.choice([-1, 1]) * rng.random() * 10.0 ** rng.randint(-30, 30) for _ in range(n)
    ] + [float(rng.randrange(2**53)) for _ in range(200)] + [struct.unpack("<d", rng.randbytes(8))[0] for _ in range(500)]
    texts = ["flow", "R1/eth0", "", "a,b", 'say "hi"', "two\nlines", "µs ünïcode", " padded "]
    cols: dict[str, list[Any]] = {"kind": [], "entity": [], "metric": [], "value": [], "unit": []}
    for i, v in enumerate(values):
        cols["kind"].append(texts[i % 2])
        cols["entity"].append(texts[i % len(texts)])
        cols["metric"].append(f"m{i}")
        cols["value"].append(v)
        cols["unit"].append(texts[(i * 3) % len(texts)])
    return cols


def packets_raw(n_assoc: int = 2, rows: int = 500) -> dict[str, Any]:
    rng = random.Random(n_assoc)
    cols: dict[str, list[int]] = {k: [] for k in ("time_ns", "assoc", "path", "kind", "tsn",
                                                  "retransmission", "length", "a_rwnd", "highest_tsn")}
    for i in range(rows):
        kind = 0 if i < n_assoc or rng.random() < 0.6 else 1
        cols["time_ns"].append(i * 1_000_003)
        cols["assoc"].append(i % n_assoc if i < n_assoc else rng.randrange(n_assoc))
        cols["path"].append(rng.choice([0, 1, 2, 0xFFFF_FFFF]))
        cols["kind"].append(kind)
        cols["tsn"].append(rng.randrange(2**32))
        cols["retransmission"].append(int(kind == 0 and rng.random() < 0.1))
        cols["length"].append(1452 if kind == 0 else 0)
        cols["a_rwnd"].append(0 if kind == 0 else rng.randrange(2**20))
        cols["highest_tsn"].append(rng.randrange(2**32))
    fmt = {"time_ns": "Q", "kind": "B", "retransmission": "B"}
    out: dict[str, Any] = {
        k: struct.pack(f"<{rows}{fmt.get(k, 'I')}", *v) for k, v in cols.items()
    }
    out["assoc_names"] = ["upload"] + [f"upload/assoc{i}" for i in range(1, n_assoc)]
    return out


# --------------------------------------------------------------------- tests


@pytest.mark.parametrize("make", [make_raw, make_empty_raw], ids=["small", "empty"])
def test_scalars_csv_has_the_bytes_pandas_wrote(make: Any, tmp_path: Path) -> None:
    result = RunResult(make())
    result.to_parquet(tmp_path)
    assert (tmp_path / "scalars.csv").read_bytes() == reference_csv(result)


def test_every_float_and_awkward_text_is_written_as_pandas_does(tmp_path: Path) -> None:
    raw = make_raw()
    raw["scalars"] = awkward_scalars()
    result = RunResult(raw)
    result.to_parquet(tmp_path)
    ours = (tmp_path / "scalars.csv").read_bytes()
    reference = reference_csv(result)
    if ours != reference:  # show the first differing line, not two megabytes
        for a, b in zip(ours.split(b"\n"), reference.split(b"\n"), strict=False):
            assert a == b
    assert ours == reference
    # And it reads back to the same numbers.
    back = pd.read_csv(
        tmp_path / "scalars.csv",
        keep_default_na=False,
        na_values={"value": ["NaN"]},
    )
    assert [repr(v) for v in back["value"]] == [repr(float(v)) for v in raw["scalars"]["value"]]


@pytest.mark.parametrize("make", [make_raw, make_empty_raw], ids=["small", "empty"])
def test_time_series_and_events_tables_match_the_pyarrow_writer(make: Any, tmp_path: Path) -> None:
    result = RunResult(make())
    result.to_parquet(tmp_path / "ours")
    (tmp_path / "ref").mkdir()
    reference_parquet(result.timeseries, tmp_path / "ref" / "timeseries.parquet")
    reference_parquet(result.events, tmp_path / "ref" / "events.parquet")
    for name in ("timeseries.parquet", "events.parquet"):
        assert_same_table(tmp_path / "ours" / name, tmp_path / "ref" / name)


@pytest.mark.parametrize("n_assoc", [1, 3, 130])
def test_packet_log_table_matches_the_pyarrow_writer(n_assoc: int, tmp_path: Path) -> None:
    # 130 associations: pandas' categorical codes (and so the Arrow index type) are int16.
    raw = make_raw()
    raw["packets"] = packets_raw(n_assoc, rows=max(500, 2 * n_assoc))
    result = RunResult(raw)
    paths = result.to_parquet(tmp_path / "ours")
    assert paths[-1].name == "packets.parquet"
    (tmp_path / "ref").mkdir()
    reference_parquet(result.packets, tmp_path / "ref" / "packets.parquet")
    assert_same_table(tmp_path / "ours" / "packets.parquet", tmp_path / "ref" / "packets.parquet")
    # Loading the directory gives the same DataFrame, and writing it again the same bytes.
    (tmp_path / "ours" / "scenario.toml").write_text(result.scenario, encoding="utf-8")
    again = RunResult.load(tmp_path / "ours")
    pd.testing.assert_frame_equal(again.packets, result.packets)
    again.to_parquet(tmp_path / "again")
    for name in ("scalars.csv", "timeseries.parquet", "events.parquet", "packets.parquet"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "ours" / name).read_bytes()


def test_core_run_writes_the_same_files_as_to_parquet(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "failover.toml").read_text(encoding="utf-8")
    overrides = ["duration=12s", "record.packets=true"]
    (tmp_path / "core").mkdir()
    raw = _core.run(text, overrides, 3, None, str(tmp_path / "core"))
    written = sorted(p.name for p in (tmp_path / "core").iterdir())
    assert written == ["events.parquet", "packets.parquet", "scalars.csv", "timeseries.parquet"]
    RunResult(raw).to_parquet(tmp_path / "python")
    for name in written:
        assert (tmp_path / "core" / name).read_bytes() == (tmp_path / "python" / name).read_bytes()
    assert len(pq.read_table(tmp_path / "core" / "packets.parquet")) > 1000


def test_write_results_refuses_inconsistent_tables_and_reports_os_errors(tmp_path: Path) -> None:
    raw = make_raw()
    raw["timeseries"]["series"] = struct.pack("<5I", 0, 1, 0, 1, 9)
    with pytest.raises(ValueError, match="index 9 out of range"):
        _core.write_results(str(tmp_path), raw)
    raw = make_raw()
    raw["events"]["time_ns"] = raw["events"]["time_ns"][:-3]
    with pytest.raises(ValueError, match="whole number"):
        _core.write_results(str(tmp_path), raw)
    del raw["events"]
    with pytest.raises(KeyError, match="events"):
        _core.write_results(str(tmp_path), raw)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(FileNotFoundError) as info:
        _core.write_results(str(tmp_path / "missing"), make_raw())
    assert info.value.filename.endswith("scalars.csv")
