"""Results of a simulation run: decoding into DataFrames and writing run directories.

:class:`RunResult` wraps the dictionary returned by ``sctpsim._core.run``. The core
hands over time series and event times as little-endian byte buffers (cheap to cross
the Rust/Python boundary); they are decoded lazily, on first access, with explicit
dtypes so the result does not depend on the host's byte order.

A *run directory* holds::

    scenario.toml        resolved scenario (seed and sctpsim version included)
    scalars.csv          kind, entity, metric, value, unit
    timeseries.parquet   time_s, kind, entity, metric, unit, value
    events.parquet       time_s, kind, entity, detail
    packets.parquet      SCTP DATA chunks sent and SACK chunks received, when the
                         scenario sets record.packets (see :attr:`RunResult.packets`)
    *.pcap               packet captures, when the scenario asks for them

The files are deterministic: the same result always produces byte-identical files,
so two runs with the same scenario and seed can be compared with ``cmp``. The core writes
all but scenario.toml (the Rust ``results`` crate): ``sctpsim run`` has it write them as the
run ends, and :meth:`RunResult.to_parquet` hands it the tables; scalars.csv is what pandas'
``to_csv`` wrote, the Parquet files hold what pyarrow wrote from the DataFrames below.

:func:`atomic_output_dir` makes a run directory appear all at once: everything is
written into a hidden sibling directory which is renamed into place only when
complete, so an interrupted or failed run never leaves a directory that looks like a
finished result.

:meth:`RunResult.load` reads a run directory back into a :class:`RunResult` (writing it
again gives the same bytes), and :meth:`RunResult.paths`, :meth:`RunResult.flows`,
:meth:`RunResult.queues` and :meth:`RunResult.sequence` draw its figures (see
:mod:`sctpsim.runplots`).
"""

from __future__ import annotations

import array
import contextlib
import fnmatch
import math
import os
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence, Sized
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

# numpy, pandas and pyarrow are imported where a DataFrame or a Parquet file is read:
# running a scenario, writing its files and printing its summary need none of them.
if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from matplotlib.figure import Figure

    from sctpsim._core import _RunOutput

__all__ = [
    "RESULT_FILES",
    "RunResult",
    "atomic_output_dir",
    "decode_timeseries",
    "read_scalars",
    "scalar_name",
    "split_scalar_name",
    "write_run",
]

SCENARIO_FILE = "scenario.toml"
SCALARS_FILE = "scalars.csv"
TIMESERIES_FILE = "timeseries.parquet"
EVENTS_FILE = "events.parquet"
#: The SCTP packet log, written only when the scenario sets ``record.packets``.
PACKETS_FILE = "packets.parquet"
#: The page ``sctpsim show`` writes into a run directory, and the prefix of its figures.
REPORT_FILE = "report.html"
FIGURE_PREFIX = "figure-"

#: Files every run directory contains (captures come in addition).
RESULT_FILES: tuple[str, ...] = (SCENARIO_FILE, SCALARS_FILE, TIMESERIES_FILE, EVENTS_FILE)

# Explicit little-endian dtypes (numpy dtype strings): the buffer layout is fixed by the
# core's contract, whatever the byte order of the machine decoding it.
_U64 = "<u8"
_U32 = "<u4"
_U8 = "u1"
_F64 = "<f8"
_ITEMSIZE = {_U64: 8, _U32: 4, _U8: 1, _F64: 8}

#: Names of the packet log's ``kind`` codes (netsim ``PacketKind``).
PACKET_KINDS: tuple[str, ...] = ("data", "sack")
#: The core's path number for a row whose path is unknown; ``-1`` in the DataFrame.
_NO_PATH = 0xFFFF_FFFF
_PACKET_U32 = ("assoc", "path", "tsn", "length", "a_rwnd", "highest_tsn")

_NS_PER_S = 1e9


def _count(buffer: bytes, dtype: str, what: str) -> int:
    """The number of elements in a buffer, rejecting a length that is not whole elements."""
    size = _ITEMSIZE[dtype]
    if len(buffer) % size:
        raise ValueError(
            f"{what}: buffer of {len(buffer)} bytes is not a whole number of "
            f"{size}-byte elements"
        )
    return len(buffer) // size


def _decode(buffer: bytes, dtype: str, what: str) -> np.ndarray[Any, Any]:
    """Decode a little-endian buffer, rejecting a length that is not whole elements."""
    import numpy as np

    _count(buffer, dtype, what)
    dt = np.dtype(dtype)
    # frombuffer shares memory with the (immutable) bytes object; convert to native
    # byte order so pandas and arithmetic never see a byte-swapped array.
    return np.frombuffer(buffer, dtype=dt).astype(dt.newbyteorder("="))


# The array module's code of a 4-byte unsigned integer ("I" on every common platform).
_U32_CODE = next(c for c in "ILH" if array.array(c).itemsize == 4)


def _max_u32(buffer: bytes) -> int:
    """The largest little-endian u32 in ``buffer`` (whole elements), -1 when it is empty."""
    values = array.array(_U32_CODE, buffer)
    if sys.byteorder == "big":
        values.byteswap()
    return max(values, default=-1)


def _max_u8(buffer: bytes) -> int:
    return max(buffer, default=-1)


def _check_lengths(what: str, columns: Mapping[str, Sized | int]) -> int:
    """Return the common length of ``columns`` (sized values or element counts) or raise
    ``ValueError`` naming them."""
    lengths = {name: col if isinstance(col, int) else len(col) for name, col in columns.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ValueError(f"{what}: columns have different lengths ({detail})")
    return next(iter(lengths.values()), 0)


def decode_timeseries(
    raw: Mapping[str, Any],
) -> tuple[list[tuple[str, str, str, str]], np.ndarray, np.ndarray, np.ndarray]:
    """The core's time-series buffers as arrays, without building a DataFrame.

    Returns ``(names, time_s, series, value)``: ``names[i]`` is ``(kind, entity,
    metric, unit)`` of series ``i``, and ``series`` holds that index for each sample.
    """
    import numpy as np

    names = raw["names"]
    table = list(zip(names["kind"], names["entity"], names["metric"], names["unit"], strict=True))
    time_ns = _decode(raw["time_ns"], _U64, "timeseries.time_ns")
    series = _decode(raw["series"], _U32, "timeseries.series")
    value = _decode(raw["value"], _F64, "timeseries.value")
    _check_lengths("timeseries", {"time_ns": time_ns, "series": series, "value": value})
    return table, time_ns.astype(np.float64) / _NS_PER_S, series, value


#: The columns of a run's ``scalars.csv``, in order.
SCALAR_COLUMNS = ("kind", "entity", "metric", "value", "unit")


def read_scalars(directory: str | os.PathLike[str]) -> pd.DataFrame:
    """``DIR/scalars.csv`` of a run directory: kind, entity, metric, value (float), unit.

    Raises:
        FileNotFoundError: there is no ``scalars.csv``.
        ValueError: it does not parse as one; the message says why (a column it lacks,
            and those it has), without the file's name.
    """
    import pandas as pd

    try:
        frame = pd.read_csv(
            Path(directory) / SCALARS_FILE,
            dtype={"kind": str, "entity": str, "metric": str, "unit": str, "value": "float64"},
            keep_default_na=False,
            na_values={"value": ["NaN"]},
        )
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    missing = next((c for c in SCALAR_COLUMNS if c not in frame.columns), None)
    if missing is not None:
        has = ", ".join(map(str, frame.columns)) or "none"
        raise ValueError(f"not a run's scalars table (no column {missing}; it has: {has})")
    return frame


def scalar_name(kind: str, entity: str, metric: str) -> str:
    """The flat name of a scalar: ``"flow/path1/goodput"``, ``"iface/R1/eth0/utilization"``.

    Kinds and metrics never contain ``/``, so :func:`split_scalar_name` can take a
    flat name apart again even when the entity does (interfaces are ``NODE/IFACE``).
    """
    return f"{kind}/{entity}/{metric}"


def split_scalar_name(name: str) -> tuple[str, str, str]:
    """``"iface/R1/eth0/utilization"`` -> ``("iface", "R1/eth0", "utilization")``.

    Raises:
        ValueError: ``name`` has fewer than three ``/``-separated parts.
    """
    kind, sep1, rest = name.partition("/")
    entity, sep2, metric = rest.rpartition("/")
    if not (sep1 and sep2 and kind and entity and metric):
        raise ValueError(f'{name!r} is not KIND/ENTITY/METRIC (e.g. "flow/path1/goodput")')
    return kind, entity, metric


def _str_column(values: Sequence[str]) -> pd.Series:
    """A string column in pandas' default string dtype, even when empty."""
    import pandas as pd

    return pd.Series(list(values), dtype=str)


class RunResult:
    """The outcome of one simulation run.

    Attributes:
        name: scenario name.
        seed: the seed actually used (rerun with it to reproduce the run).
        scenario: the resolved scenario as TOML text.
        captures: file names of the pcap files the core wrote into the capture
            directory (empty when captures were off).

    The DataFrame properties are computed on first access and cached; treat them as
    read-only (copy before modifying).
    """

    name: str
    seed: int
    scenario: str
    captures: list[str]

    def __init__(self, raw: _RunOutput | Mapping[str, Any]) -> None:
        """Wrap the dictionary returned by ``sctpsim._core.run``.

        Raises:
            ValueError: the dictionary is malformed (missing keys, column lengths
                that disagree, truncated buffers).
        """
        try:
            self.name = str(raw["name"])
            self.seed = int(raw["seed"])
            self.scenario = str(raw["scenario"])
            self.captures = [str(c) for c in raw["captures"]]
            self._scalars_raw: Mapping[str, Any] = raw["scalars"]
            self._timeseries_raw: Mapping[str, Any] = raw["timeseries"]
            self._events_raw: Mapping[str, Any] = raw["events"]
            # Absent (older cores) or None: the run kept no packet log.
            self._packets_raw: Mapping[str, Any] | None = raw.get("packets")
        except KeyError as e:
            raise ValueError(f"run result is missing key {e}") from None
        self._validate()

    def _validate(self) -> None:
        """Check the raw columns cheaply (no DataFrames are built, nothing is imported).

        Done at construction so a malformed result fails there, not later in the
        middle of writing files.
        """
        try:
            _check_lengths(
                "scalars",
                {k: self._scalars_raw[k] for k in ("kind", "entity", "metric", "value", "unit")},
            )
            ts = self._timeseries_raw
            _check_lengths(
                "timeseries",
                {
                    "time_ns": _count(ts["time_ns"], _U64, "timeseries.time_ns"),
                    "series": _count(ts["series"], _U32, "timeseries.series"),
                    "value": _count(ts["value"], _F64, "timeseries.value"),
                },
            )
            names = ts["names"]
            n_series = _check_lengths(
                "timeseries.names", {k: names[k] for k in ("kind", "entity", "metric", "unit")}
            )
            highest = _max_u32(ts["series"])
            if highest >= n_series:
                raise ValueError(
                    f"timeseries.series: index {highest} out of range "
                    f"({n_series} series names)"
                )
            ev = self._events_raw
            _check_lengths(
                "events",
                {
                    "time_ns": _count(ev["time_ns"], _U64, "events.time_ns"),
                    "kind": ev["kind"],
                    "entity": ev["entity"],
                    "detail": ev["detail"],
                },
            )
            self._validate_packets()
        except KeyError as e:
            raise ValueError(f"run result is missing key {e}") from None

    def _validate_packets(self) -> None:
        raw = self._packets_raw
        if raw is None:
            return
        columns = {k: _count(raw[k], _U32, f"packets.{k}") for k in _PACKET_U32}
        columns["time_ns"] = _count(raw["time_ns"], _U64, "packets.time_ns")
        columns["kind"] = _count(raw["kind"], _U8, "packets.kind")
        columns["retransmission"] = _count(raw["retransmission"], _U8, "packets.retransmission")
        _check_lengths("packets", columns)
        highest = _max_u32(raw["assoc"])
        if highest >= len(raw["assoc_names"]):
            raise ValueError(
                f"packets.assoc: index {highest} out of range "
                f"({len(raw['assoc_names'])} association names)"
            )
        kind = _max_u8(raw["kind"])
        if kind >= len(PACKET_KINDS):
            raise ValueError(f"packets.kind: unknown kind code {kind}")

    def __repr__(self) -> str:
        return (
            f"RunResult(name={self.name!r}, seed={self.seed}, "
            f"scalars={len(self._scalars_raw['value'])}, "
            f"events={len(self._events_raw['kind'])})"
        )

    # ------------------------------------------------------------------ tables

    @cached_property
    def scalar_table(self) -> pd.DataFrame:
        """End-of-run scalars in long form: columns kind, entity, metric, value (float), unit
        (what ``scalars.csv`` holds)."""
        import pandas as pd

        raw = self._scalars_raw
        return pd.DataFrame(
            {
                "kind": _str_column(raw["kind"]),
                "entity": _str_column(raw["entity"]),
                "metric": _str_column(raw["metric"]),
                "value": pd.Series(raw["value"], dtype="float64"),
                "unit": _str_column(raw["unit"]),
            }
        )

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        """Sampled time series in long format.

        Columns: time_s (float seconds), kind, entity, metric, unit, value (float).
        Select one series with e.g.
        ``ts[(ts.entity == "R1/eth0") & (ts.metric == "queue_packets")]``.
        """
        import numpy as np
        import pandas as pd

        raw = self._timeseries_raw
        time_ns = _decode(raw["time_ns"], _U64, "timeseries.time_ns")
        series = _decode(raw["series"], _U32, "timeseries.series")
        value = _decode(raw["value"], _F64, "timeseries.value")
        names = raw["names"]
        idx = series.astype(np.intp)  # range-checked by _validate

        def column(key: str) -> pd.Series:
            # Expand the per-series name to one value per sample by fancy indexing.
            table = np.asarray(list(names[key]) or [""], dtype=object)
            return pd.Series(table[idx], dtype=str)

        return pd.DataFrame(
            {
                "time_s": pd.Series(time_ns.astype(np.float64) / _NS_PER_S, dtype="float64"),
                "kind": column("kind"),
                "entity": column("entity"),
                "metric": column("metric"),
                "unit": column("unit"),
                "value": pd.Series(value, dtype="float64"),
            }
        )

    @cached_property
    def events(self) -> pd.DataFrame:
        """Event log: columns time_s (float seconds), kind, entity, detail."""
        import numpy as np
        import pandas as pd

        raw = self._events_raw
        time_ns = _decode(raw["time_ns"], _U64, "events.time_ns")
        return pd.DataFrame(
            {
                "time_s": pd.Series(time_ns.astype(np.float64) / _NS_PER_S, dtype="float64"),
                "kind": _str_column(raw["kind"]),
                "entity": _str_column(raw["entity"]),
                "detail": _str_column(raw["detail"]),
            }
        )

    @property
    def has_packets(self) -> bool:
        """True if the run kept the SCTP packet log (``record.packets = true``)."""
        return self._packets_raw is not None

    @cached_property
    def packets(self) -> pd.DataFrame | None:
        """The SCTP packet log (``record.packets = true``), or ``None`` when it was off.

        One row per DATA chunk an association sent and per SACK chunk it received.
        Columns: ``time_s`` (float seconds); ``association`` (categorical: the name in
        results, e.g. ``upload`` or ``upload/assoc1``); ``path`` (int32: the path
        number, as in ``upload/path<i>``; -1 when unknown); ``kind`` (categorical:
        ``data`` or ``sack``); ``tsn`` (uint32: a DATA chunk's TSN, a SACK's Cumulative
        TSN Ack); ``retransmission`` (bool: the DATA chunk's TSN was sent before);
        ``length`` (uint32: user data bytes of a DATA chunk, 0 for a SACK); ``a_rwnd``
        (uint32: a SACK's advertised window, 0 for DATA); ``highest_tsn`` (uint32: the
        highest TSN a SACK reports received, counting its gap ack blocks; a DATA
        chunk's own TSN). TSNs are 32-bit serial numbers; unwrap them relative to the
        first (as :meth:`sequence` does) before doing arithmetic.
        """
        import numpy as np
        import pandas as pd

        raw = self._packets_raw
        if raw is None:
            return None
        u32 = {k: _decode(raw[k], _U32, f"packets.{k}") for k in _PACKET_U32}
        time_ns = _decode(raw["time_ns"], _U64, "packets.time_ns")
        kind = _decode(raw["kind"], _U8, "packets.kind")
        rtx = _decode(raw["retransmission"], _U8, "packets.retransmission")
        path = u32["path"].astype(np.int64)
        path[path == _NO_PATH] = -1
        return pd.DataFrame(
            {
                "time_s": pd.Series(time_ns.astype(np.float64) / _NS_PER_S, dtype="float64"),
                "association": pd.Categorical.from_codes(
                    u32["assoc"].astype(np.int32),
                    categories=pd.Index(list(raw["assoc_names"]), dtype=str),
                ),
                "path": pd.Series(path.astype(np.int32), dtype="int32"),
                "kind": pd.Categorical.from_codes(
                    kind.astype(np.int8), categories=pd.Index(list(PACKET_KINDS), dtype=str)
                ),
                "tsn": pd.Series(u32["tsn"], dtype="uint32"),
                "retransmission": pd.Series(rtx.astype(bool), dtype="bool"),
                "length": pd.Series(u32["length"], dtype="uint32"),
                "a_rwnd": pd.Series(u32["a_rwnd"], dtype="uint32"),
                "highest_tsn": pd.Series(u32["highest_tsn"], dtype="uint32"),
            }
        )

    def series_arrays(
        self,
    ) -> tuple[list[tuple[str, str, str, str]], np.ndarray, np.ndarray, np.ndarray]:
        """The time series as arrays, without the long DataFrame (cheap for long runs):
        ``(names, time_s, series, value)`` as :func:`decode_timeseries` returns them."""
        return decode_timeseries(self._timeseries_raw)

    def scalar_rows(self) -> Iterator[tuple[str, str, str, float, str]]:
        """Every scalar as ``(kind, entity, metric, value, unit)``, in the core's order
        (the rows of :attr:`scalar_table`, without pandas)."""
        raw = self._scalars_raw
        for k, e, m, v, u in zip(
            raw["kind"], raw["entity"], raw["metric"], raw["value"], raw["unit"], strict=True
        ):
            yield str(k), str(e), str(m), math.nan if v is None else float(v), str(u)

    def entities(self, kind: str) -> list[str]:
        """The entities of ``kind`` (``"flow"``, ``"iface"``, ``"sctp"``, ...) that have
        scalars, in the order the core reported them."""
        return [e for k, e in self._by_entity if k == kind]

    def entity_scalars(self, kind: str, entity: str) -> list[tuple[str, float]]:
        """``(metric, value)`` of every scalar of one entity, in the core's order."""
        return self._by_entity.get((kind, entity), [])

    @cached_property
    def _by_entity(self) -> dict[tuple[str, str], list[tuple[str, float]]]:
        out: dict[tuple[str, str], list[tuple[str, float]]] = {}
        for k, e, m, v, _ in self.scalar_rows():
            out.setdefault((k, e), []).append((m, v))
        return out

    @cached_property
    def _scalar_index(self) -> dict[tuple[str, str, str], float]:
        raw = self._scalars_raw
        return {
            (k, e, m): math.nan if v is None else float(v)
            for k, e, m, v in zip(
                raw["kind"], raw["entity"], raw["metric"], raw["value"], strict=True
            )
        }

    @cached_property
    def scalars(self) -> pd.Series:
        """Every scalar as one float, indexed by its flat name ``kind/entity/metric``
        (``result.scalars["sctp/upload/failover_time"]``).

        ``series.attrs["units"]`` maps each name to its unit (``"bit/s"``, ``"s"``,
        ``"1"`` for ratios, ``""`` when none). ``dict(result.scalars)`` gives a plain
        dictionary. These names are the scalar columns of a sweep's results; the long
        form with a unit column is :attr:`scalar_table`.
        """
        import pandas as pd

        raw = self._scalars_raw
        names = [
            scalar_name(k, e, m)
            for k, e, m in zip(raw["kind"], raw["entity"], raw["metric"], strict=True)
        ]
        values = [math.nan if v is None else float(v) for v in raw["value"]]
        series = pd.Series(values, index=pd.Index(names, dtype=str), dtype="float64", name="value")
        series.attrs["units"] = dict(zip(names, (str(u) for u in raw["unit"]), strict=True))
        return series

    def scalar(self, kind: str, entity: str, metric: str) -> float:
        """Value of one scalar, e.g. ``scalar("flow", "video", "goodput")``.

        Raises:
            KeyError: no such scalar (the message lists the metrics that the entity
                does have, to catch typos).
        """
        try:
            return self._scalar_index[(kind, entity, metric)]
        except KeyError:
            known = sorted(m for (k, e, m) in self._scalar_index if (k, e) == (kind, entity))
            hint = f"; {kind} {entity!r} has: {', '.join(known)}" if known else ""
            raise KeyError(f"no scalar {kind}/{entity}/{metric}{hint}") from None

    def scalar_or_nan(self, kind: str, entity: str, metric: str) -> float:
        """Like :meth:`scalar` but NaN when the scalar does not exist.

        Useful for metrics that only exist when something happened, such as
        ``drops_<reason>``.
        """
        return self._scalar_index.get((kind, entity, metric), math.nan)

    # ----------------------------------------------------------------- figures

    def paths(self, association: str | None = None, *, width: int = 1100) -> Figure:
        """Per path of an SCTP association (or for a TCP connection): cwnd, ssthresh,
        flight size, SRTT and RTO on a shared time axis, with faults and the
        association's events (T3 expiry, PF, inactive, failover, switch-back) marked.

        ``association`` is its name in results (``"upload"``, ``"upload/assoc1"``, or a
        TCP flow's name); ``None`` takes the first. ``width`` is in pixels at 100 dpi.
        Needs time series (``record.interval`` above zero).
        """
        from sctpsim import runplots

        return runplots.paths_figure(self, association, width=width)

    def flows(self, *, width: int = 1100, limit: int | None = 12) -> Figure:
        """Goodput over time (bytes the receiving application got per sampling
        interval, as bit/s) of every flow; with more than ``limit`` (``None``: no limit),
        those that received most. Needs time series."""
        from sctpsim import runplots

        return runplots.flows_figure(self, width=width, limit=limit)

    def queues(self, *, width: int = 1100, limit: int | None = 12) -> Figure:
        """Queue occupancy (packets) over time of every interface that queued or
        dropped, with its drops (times when ``record.events`` has ``"drop"``, else the
        totals in the legend); with more than ``limit`` (``None``: no limit), those with
        the most drops, then the longest queues. Needs time series."""
        from sctpsim import runplots

        return runplots.queues_figure(self, width=width, limit=limit)

    def sequence(self, association: str | None = None, *, width: int = 1100) -> Figure:
        """Time-sequence graph of an SCTP association, as Wireshark's tcptrace graph:
        TSN (relative to the first) against time, one colour per path, retransmissions
        marked, the SACKs' cumulative TSN ack as a step line. Needs the packet log
        (``record.packets = true``)."""
        from sctpsim import runplots

        return runplots.sequence_figure(self, association, width=width)

    # ------------------------------------------------------------------- files

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> RunResult:
        """Read a run directory written by :meth:`to_parquet` (or ``sctpsim run``).

        Writing the result again gives byte-identical files.

        Raises:
            FileNotFoundError: a result file is missing.
            ValueError: a file does not hold what a run directory holds.
        """
        import tomllib

        d = Path(directory)
        scenario = (d / SCENARIO_FILE).read_text(encoding="utf-8")
        try:
            doc = tomllib.loads(scenario)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{d / SCENARIO_FILE}: {e}") from None
        try:
            scalars = read_scalars(d)
        except ValueError as e:
            raise ValueError(f"{SCALARS_FILE}: {e}") from None
        raw: dict[str, Any] = {
            "name": str(doc.get("name", d.name)),
            "seed": int(doc.get("seed", 0)),
            "scenario": scenario,
            "captures": sorted(p.name for p in d.glob("*.pcap")),
            "scalars": {
                k: [str(v) for v in scalars[k]] for k in ("kind", "entity", "metric", "unit")
            }
            | {"value": [float(v) for v in scalars["value"]]},
            "timeseries": _timeseries_raw_from(d / TIMESERIES_FILE),
            "events": _events_raw_from(d / EVENTS_FILE),
            "packets": _packets_raw_from(d / PACKETS_FILE)
            if (d / PACKETS_FILE).is_file()
            else None,
        }
        return cls(raw)

    def to_parquet(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write scenario.toml, scalars.csv, timeseries.parquet and events.parquet, and
        packets.parquet when the run kept the packet log.

        ``directory`` is created if missing and existing files are overwritten in
        place. This is *not* atomic; use :func:`write_run` (or
        :func:`atomic_output_dir`) for a directory that appears only when complete.
        The tables are written by the core (``sctpsim._core.write_results``), as
        ``sctpsim run`` writes them, so neither needs pandas or pyarrow.

        Returns the paths written.
        """
        from sctpsim import _core

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        scenario = self.write_scenario(out)
        tables = {
            "scalars": self._scalars_raw,
            "timeseries": self._timeseries_raw,
            "events": self._events_raw,
            "packets": self._packets_raw,
        }
        return [scenario, *(Path(p) for p in _core.write_results(os.fspath(out), tables))]

    def write_scenario(self, directory: str | os.PathLike[str]) -> Path:
        """Write the resolved scenario as ``DIR/scenario.toml`` and return its path (the
        other files of a run directory come from :meth:`to_parquet`, or from the core when
        ``sctpsim._core.run`` is given an output directory)."""
        path = Path(directory) / SCENARIO_FILE
        # newline="" : keep the core's "\n" line endings on every platform, so the
        # bytes do not depend on where the run happened.
        with path.open("w", encoding="utf-8", newline="") as f:
            f.write(self.scenario)
        return path


def _ns(time_s: np.ndarray) -> bytes:
    """Seconds (as written) back to the core's nanoseconds: exact, since every time was
    a whole number of nanoseconds below 2**53."""
    import numpy as np

    return np.rint(np.asarray(time_s, dtype=np.float64) * _NS_PER_S).astype(_U64).tobytes()


def _codes(column: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """A text column as (codes, categories), categories in order of first appearance."""
    import numpy as np
    import pyarrow as pa

    values = column.combine_chunks()
    if not pa.types.is_dictionary(values.type):
        values = values.dictionary_encode()
    codes = values.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    categories = [str(c) for c in values.dictionary.to_pylist()]
    return codes, categories


def _timeseries_raw_from(path: Path) -> dict[str, Any]:
    import numpy as np
    import pyarrow.parquet as pq

    columns = ["kind", "entity", "metric", "unit"]
    table = pq.read_table(path, read_dictionary=columns)
    coded = [_codes(table.column(c)) for c in columns]
    # One key per (kind, entity, metric, unit); series ids in order of first appearance,
    # as the core numbers them.
    key = np.zeros(table.num_rows, dtype=np.int64)
    for codes, categories in coded:
        key = key * max(1, len(categories)) + codes
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    series = rank[inverse].astype(_U32)
    rows = first[order]
    names = {c: [cats[codes[i]] for i in rows] for c, (codes, cats) in zip(columns, coded, strict=True)}
    return {
        "time_ns": _ns(table.column("time_s").to_numpy()),
        "series": series.tobytes(),
        "value": np.asarray(table.column("value").to_numpy(), dtype=_F64).tobytes(),
        "names": names,
    }


def _events_raw_from(path: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return {
        "time_ns": _ns(table.column("time_s").to_numpy()),
        **{c: [str(v) for v in table.column(c).to_pylist()] for c in ("kind", "entity", "detail")},
    }


def _packets_raw_from(path: Path) -> dict[str, Any]:
    import numpy as np
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    assoc, names = _codes(table.column("association"))
    kind_codes, kind_names = _codes(table.column("kind"))
    unknown = set(kind_names) - set(PACKET_KINDS)
    if unknown:
        raise ValueError(f"{path}: unknown packet kinds {sorted(unknown)}")
    remap = np.array([PACKET_KINDS.index(k) for k in kind_names] or [0], dtype=np.uint8)
    path_col = table.column("path").to_numpy().astype(np.int64)
    path_col[path_col < 0] = _NO_PATH

    def u32(name: str) -> bytes:
        return table.column(name).to_numpy().astype(_U32).tobytes()

    return {
        "assoc_names": names,
        "time_ns": _ns(table.column("time_s").to_numpy()),
        "assoc": assoc.astype(_U32).tobytes(),
        "path": path_col.astype(_U32).tobytes(),
        "kind": remap[kind_codes].astype(_U8).tobytes(),
        "tsn": u32("tsn"),
        "retransmission": table.column("retransmission").to_numpy().astype(_U8).tobytes(),
        "length": u32("length"),
        "a_rwnd": u32("a_rwnd"),
        "highest_tsn": u32("highest_tsn"),
    }


# --------------------------------------------------------------- atomic writing


def _partial_path(dest: Path) -> Path:
    return dest.parent / f".{dest.name}.partial-{os.getpid()}"


def _old_path(dest: Path) -> Path:
    return dest.parent / f".{dest.name}.old-{os.getpid()}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process, or not a pid we can ask about: keep its files
    return True


def _remove_stale_staging(dest: Path) -> None:
    """Delete ``.<name>.partial-<pid>`` and ``.<name>.old-<pid>`` siblings whose process
    is gone (a run killed with SIGKILL, or a machine that lost power, leaves them)."""
    prefixes = (f".{dest.name}.partial-", f".{dest.name}.old-")
    with contextlib.suppress(OSError):
        for entry in dest.parent.iterdir():
            for prefix in prefixes:
                pid = entry.name[len(prefix) :] if entry.name.startswith(prefix) else ""
                if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
                    shutil.rmtree(entry, ignore_errors=True)


#: The names of the files a run directory holds: the results, the captures, and the page
#: and figures of ``sctpsim show``.
_RUN_FILE_PATTERNS = (
    SCENARIO_FILE,
    SCALARS_FILE,
    TIMESERIES_FILE,
    EVENTS_FILE,
    PACKETS_FILE,
    "*.pcap",
    REPORT_FILE,
    f"{FIGURE_PREFIX}*.png",
    f"{FIGURE_PREFIX}*.svg",
)


def _looks_replaceable(dest: Path) -> bool:
    """True if ``dest`` may be replaced: an empty directory or a previous run, which holds
    ``scenario.toml`` and nothing but files sctpsim writes into a run directory.

    Guards against ``--out .`` or ``--out ~`` silently deleting a directory of other
    files, even one that happens to hold a ``scenario.toml``.
    """
    if not dest.is_dir() or dest.is_symlink():
        return False
    entries = list(dest.iterdir())
    if not entries:
        return True
    return (dest / SCENARIO_FILE).is_file() and all(
        e.is_file()
        and not e.is_symlink()
        and any(fnmatch.fnmatchcase(e.name, p) for p in _RUN_FILE_PATTERNS)
        for e in entries
    )


@contextlib.contextmanager
def atomic_output_dir(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Context manager that builds a directory out of sight, then renames it into place.

    Yields a fresh temporary sibling directory ``<parent>/.<name>.partial-<pid>``
    (same file system, so the final rename is atomic); write everything there —
    the core can write its captures into it during the run. When the ``with``
    block completes, the temporary directory is renamed to ``directory``. An
    existing ``directory`` (a previous run or an empty directory) is replaced: it
    is renamed away, the new one renamed in, then the old one deleted.

    If the block raises (``KeyboardInterrupt`` included) the temporary directory is
    deleted and ``directory`` is left as it was: absent if it did not exist, or
    the previous complete result. Staging directories of processes that no longer
    run (killed with SIGKILL) are deleted the next time ``directory`` is written.

    Raises:
        FileExistsError: ``directory`` exists but is not a directory, or is a
            non-empty directory without ``scenario.toml`` (refusing to delete
            what is probably not a run directory).
    """
    # Absolute path: "--out ." must yield a real name for the sibling directory.
    dest = Path(os.path.abspath(directory))
    if not dest.name:
        raise FileExistsError(f"{dest}: cannot replace a file-system root")

    def check_dest() -> None:
        if (dest.exists() or dest.is_symlink()) and not _looks_replaceable(dest):
            raise FileExistsError(
                f"{dest} exists and does not look like an sctpsim results directory; "
                "refusing to replace it"
            )

    check_dest()
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(dest)
    partial = _partial_path(dest)
    # A leftover from an earlier process that happened to have our pid.
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        yield partial
        check_dest()  # something may have appeared there while we were running
        _swap_into_place(partial, dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _swap_into_place(partial: Path, dest: Path) -> None:
    """Rename ``partial`` to ``dest``, replacing an existing ``dest``."""
    if not (dest.exists() or dest.is_symlink()):
        os.rename(partial, dest)
        return
    # POSIX rename cannot replace a non-empty directory, so move the old one aside
    # first. Between the two renames ``dest`` briefly does not exist, which is
    # harmless: nothing ever sees a half-written ``dest``.
    old = _old_path(dest)
    shutil.rmtree(old, ignore_errors=True)
    os.rename(dest, old)
    try:
        os.rename(partial, dest)
    except BaseException:
        # Put the previous result back rather than leave nothing.
        with contextlib.suppress(OSError):
            os.rename(old, dest)
        raise
    shutil.rmtree(old, ignore_errors=True)


def write_run(result: RunResult, directory: str | os.PathLike[str]) -> Path:
    """Write ``result`` to ``directory`` atomically and return the directory.

    Only the result files are written; to keep captures, run with the capture
    directory inside :func:`atomic_output_dir` instead (as the CLI does).
    """
    with atomic_output_dir(directory) as tmp:
        result.to_parquet(tmp)
    return Path(os.path.abspath(directory))
