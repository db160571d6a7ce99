"""Type stubs for ``sctpsim._core``, the compiled Rust extension (crates/py).

The extension is deliberately small: it validates scenario TOML text, runs the
simulation, returning plain Python containers (lists, dicts and little-endian byte
buffers), and writes a run's result files (CSV and Parquet). Everything friendlier —
DataFrames, run directories, the command line — lives in the pure-Python modules of
:mod:`sctpsim`.

The ``_``-prefixed ``TypedDict`` classes below exist only for type checkers; they
describe the shape of the dictionary returned by :func:`run` and are not importable
at run time.
"""

import os
from collections.abc import Callable
from typing import TypedDict

__version__: str
"""Version of the simulator core (also recorded in every resolved scenario)."""
__build_id__: str
"""Hash of the Rust sources, lock file and compiler the core was built from: part of a
sweep run's identity, so a new engine never reuses results of an old one."""

class ScenarioError(ValueError):
    """The scenario (or an override) is invalid.

    ``str(e)`` is a single line naming the key path, the bad value and what was
    expected, for example::

        links[2].delay: "30 sm" is not a duration (try "30ms")

    or, for TOML syntax errors, ``line 3, column 7: <parser message>``.
    """

    key: str
    """The key path (``"links[2].delay"``); ``""`` for whole-file problems such as TOML
    syntax; ``"--set KEY=VALUE"`` when the override itself is malformed."""
    reason: str
    """What is wrong, without the key path (``str(e)`` is ``f"{key}: {reason}"``)."""

class SimulationError(RuntimeError):
    """The engine or its I/O (for example writing a capture file) failed during a run."""

class _Param(TypedDict):
    key: str
    """Key path, e.g. ``"links[].delay"`` (``[]`` marks an array of tables)."""
    type: str
    """Value type, e.g. ``"duration"``, ``"rate"``, ``"size"``, ``"string"``, ``"integer"``."""
    default: str | None
    """Default as written in TOML (e.g. ``"1ms"``), or ``None`` when the key is required."""
    unit: str
    """SI unit of the value once parsed (``"s"``, ``"bit/s"``, ``"B"``), or ``""``."""
    doc: str
    """One-line description."""

class _Scalars(TypedDict):
    """Column-oriented table of end-of-run scalars; all lists have the same length."""

    kind: list[str]
    entity: list[str]
    metric: list[str]
    value: list[float]
    unit: list[str]

class _SeriesNames(TypedDict):
    """One row per time series; ``timeseries["series"]`` indexes into these lists."""

    kind: list[str]
    entity: list[str]
    metric: list[str]
    unit: list[str]

class _Timeseries(TypedDict):
    """Long-format samples as little-endian buffers of equal element count."""

    time_ns: bytes
    """``<u8`` simulated time of each sample, nanoseconds."""
    series: bytes
    """``<u4`` index into ``names`` of each sample."""
    value: bytes
    """``<f8`` sample value (may be NaN)."""
    names: _SeriesNames

class _Events(TypedDict):
    """Event log; ``time_ns`` is a ``<u8`` buffer with one element per list entry."""

    time_ns: bytes
    kind: list[str]
    entity: list[str]
    detail: list[str]

class _Packets(TypedDict):
    """The SCTP packet log (``record.packets``): one element per row in each buffer."""

    assoc_names: list[str]
    """Association names; ``assoc`` indexes this list."""
    time_ns: bytes
    """``<u8`` time of each row, nanoseconds."""
    assoc: bytes
    """``<u4`` association of each row."""
    path: bytes
    """``<u4`` path number (``0xFFFFFFFF``: unknown)."""
    kind: bytes
    """``u1`` 0 = DATA chunk sent, 1 = SACK chunk received."""
    tsn: bytes
    """``<u4`` TSN (DATA) or Cumulative TSN Ack (SACK)."""
    retransmission: bytes
    """``u1`` 1 when the DATA chunk's TSN was sent before."""
    length: bytes
    """``<u4`` user data bytes (DATA), 0 for a SACK."""
    a_rwnd: bytes
    """``<u4`` advertised receiver window (SACK), 0 for DATA."""
    highest_tsn: bytes
    """``<u4`` highest TSN a SACK reports received (gap ack blocks included); DATA: its TSN."""

class _RunOutput(TypedDict):
    name: str
    """Scenario name."""
    seed: int
    """Seed actually used (the ``seed`` argument, else the scenario's ``seed`` key)."""
    scenario: str
    """Resolved scenario TOML text, including the seed and the sctpsim version."""
    scalars: _Scalars
    timeseries: _Timeseries
    events: _Events
    packets: _Packets | None
    """The SCTP packet log, ``None`` unless the scenario sets ``record.packets``."""
    captures: list[str]
    """File names (not paths) of the pcap files written into ``capture_dir``."""

def params() -> list[_Param]:
    """Describe every scenario key, in reference order."""

def check(text: str, overrides: list[str]) -> str:
    """Validate scenario TOML ``text`` with ``KEY=VALUE`` ``overrides``.

    Returns the resolved scenario as TOML text with every default filled in.

    Raises:
        ScenarioError: the scenario or an override is invalid.
    """

def run(
    text: str,
    overrides: list[str],
    seed: int | None = None,
    capture_dir: str | os.PathLike[str] | None = None,
    out_dir: str | os.PathLike[str] | None = None,
) -> _RunOutput:
    """Validate and simulate a scenario (the GIL is released while simulating).

    Args:
        text: scenario TOML text.
        overrides: ``KEY=VALUE`` strings applied on top of ``text``.
        seed: master RNG seed; ``None`` uses the scenario's ``seed`` key.
        capture_dir: existing directory that receives the pcap files the scenario
            asks for; ``None`` disables captures.
        out_dir: existing directory that receives the result files as
            :func:`write_results` writes them, before the results are returned;
            ``None`` writes none.

    Raises:
        ScenarioError: the scenario or an override is invalid (nothing was simulated).
        SimulationError: the run failed.
        OSError: writing a result file into ``out_dir`` failed.
    """

class _Tables(TypedDict):
    scalars: _Scalars
    timeseries: _Timeseries
    events: _Events
    packets: _Packets | None

def write_results(directory: str | os.PathLike[str], tables: _Tables) -> list[str]:
    """Write a run's result files into the existing ``directory`` (replacing them) and
    return their paths: ``scalars.csv`` (byte for byte what pandas' ``to_csv`` writes),
    ``timeseries.parquet``, ``events.parquet`` and, when ``tables["packets"]`` is not
    ``None``, ``packets.parquet`` (Zstandard-compressed Parquet with the Arrow schema of
    :class:`sctpsim.RunResult`'s DataFrames, an undefined time-series value as null).
    ``tables`` has the form :func:`run` returns
    (a ``_RunOutput`` is one). The GIL is released while writing.

    Raises:
        ValueError: the tables are inconsistent (buffers of partial elements, columns of
            different lengths, an index out of range).
        OSError: a file cannot be written.
    """

class _RealOutput(_RunOutput):
    interrupted: bool
    """Ctrl-C (a pending KeyboardInterrupt) ended the run; results cover it up to then."""

def real_sink(
    bind: list[str],
    port: int = 5001,
    udp_port: int = 9899,
    preset: str = "rfc9260",
    sets: list[str] = ...,
    time: float | None = None,
    once: bool = False,
    check: str = "none",
    max_associations: int = 256,
    faults: list[str] = ...,
    pcap: str | os.PathLike[str] | None = None,
    progress: Callable[[float, int, int, bool], object] | None = None,
    crc32c: bool = True,
) -> _RealOutput:
    """Real mode's sink on UDP sockets (see ``sctpsim.real.sink``); the GIL is released
    while it runs.

    Raises:
        ScenarioError: a preset or ``sctp.KEY=VALUE`` setting is invalid.
        ValueError: an address, a fault or the check mode is invalid.
        SimulationError: a socket could not be bound or the capture written.
    """

def real_send(
    bind: list[str],
    peer: list[str],
    peer_port: int = 5001,
    peer_udp_port: int = 9899,
    port: int = 0,
    udp_port: int = 9899,
    bytes: int | None = None,
    time: float | None = None,
    message_size: int = 1024,
    streams: int = 1,
    unordered: bool = False,
    preset: str = "rfc9260",
    sets: list[str] = ...,
    faults: list[str] = ...,
    pcap: str | os.PathLike[str] | None = None,
    progress: Callable[[float, int, int, bool], object] | None = None,
    crc32c: bool = True,
) -> _RealOutput:
    """Real mode's bulk sender on UDP sockets (see ``sctpsim.real.send``); the GIL is
    released while it runs.

    Raises:
        ScenarioError: a preset or ``sctp.KEY=VALUE`` setting is invalid.
        ValueError: an address, a fault, the size or the byte/time target is invalid.
        SimulationError: a socket could not be bound or the capture written.
    """
