"""Real mode: the simulator's SCTP engine on UDP sockets (SCTP over UDP, RFC 6951).

:func:`sink` and :func:`send` run the Rust driver (crate ``sctp-udp``) with the GIL
released and return a :class:`~sctpsim.results.RunResult`, the same kind of object a
simulation returns: the same scalars (``sctp/<app>/goodput``, per-path
``sctp_path/<app>/path<i>/...`` with the final ``srtt`` and ``rto``), time series,
events, and the pcap capture when ``capture_dir`` is given. Extra scalars of kind
``real`` hold the driver's counters (datagrams, fault drops, checks) and
``run/run/wall_time`` the run's length; ``result.interrupted`` is true when Ctrl-C
ended it (results are complete up to that moment).

Example (two terminals, or two processes)::

    import sctpsim.real as real

    real.sink(["127.0.0.1", "127.0.0.2"], once=True, check="pattern")
    r = real.send(["127.0.0.1", "127.0.0.2"], ["127.0.0.1", "127.0.0.2"],
                  udp_port=9900, bytes=50_000_000, message_size=8192)
    r.scalars["sctp/send/goodput"]

SCTP parameters come from a preset and ``sctp.KEY=VALUE`` settings, read exactly as a
scenario's ``apps[].sctp`` table (``sctpsim params`` lists the keys); an invalid one
raises :class:`~sctpsim.ScenarioError` naming the key (``sctp.rto_min``). Socket
problems raise :class:`~sctpsim.SimulationError`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from sctpsim import _core, _toml
from sctpsim.results import RunResult

__all__ = ["DEFAULT_UDP_PORT", "ProgressCallback", "send", "sink"]

#: The registered UDP port of SCTP over UDP (RFC 6951 §5.1).
DEFAULT_UDP_PORT = 9899

#: Called about once a second: (elapsed seconds, user bytes acknowledged or read so far,
#: associations, ending).
ProgressCallback = Callable[[float, int, int, bool], None]


def _result(raw: dict[str, object], **settings: object) -> RunResult:
    """The run's result, with ``settings`` (what the core's description of the run leaves
    out: the preset, the ``--set`` settings, ...) added to its ``scenario.toml``."""
    raw["scenario"] = str(raw["scenario"]) + "".join(
        f"{_toml.key(k)} = {_toml.literal(v)}\n" for k, v in settings.items()
    )
    result = RunResult(raw)  # type: ignore[arg-type]
    result.interrupted = bool(raw.get("interrupted", False))  # type: ignore[attr-defined]
    return result


def _capture(capture_dir: str | os.PathLike[str] | None, name: str) -> str | None:
    if capture_dir is None:
        return None
    Path(capture_dir).mkdir(parents=True, exist_ok=True)
    return str(Path(capture_dir) / name)


def sink(
    bind: Sequence[str],
    *,
    port: int = 5001,
    udp_port: int = DEFAULT_UDP_PORT,
    preset: str = "rfc9260",
    sets: Iterable[str] = (),
    time: float | None = None,
    once: bool = False,
    check: str = "none",
    max_associations: int = 256,
    faults: Iterable[str] = (),
    capture_dir: str | os.PathLike[str] | None = None,
    progress: ProgressCallback | None = None,
    crc32c: bool = True,
) -> RunResult:
    """Accept associations on ``bind`` (one socket per address) and read everything.

    Args:
        bind: local IPv4 addresses.
        port: SCTP port.
        udp_port: local UDP encapsulation port (the same on every address).
        preset: SCTP parameter preset (``rfc9260``, ``linux``, ``freebsd``, ...).
        sets: ``sctp.KEY=VALUE`` settings.
        time: seconds to run; ``None`` until Ctrl-C (or ``once``).
        once: end when the first association has closed.
        check: ``none``; ``pattern`` (an ``sctpsim real send`` sender's pattern, every
            message checked and counted once); ``fill:N`` (every byte equal to N;
            usrsctp's ``tsctp`` sends ``fill:98``).
        max_associations: most associations at once; more are refused with an ABORT.
        faults: ``ADDR@TIME[:SHARE]``: drop that share (default all) of the packets
            through local address ADDR from TIME (``2s``, ``500ms`` from the start;
            ``established+500ms`` from the first association's establishment) on, both
            ways.
        capture_dir: directory for ``sink.pcap`` (IPv4/UDP/SCTP), or ``None``.
        progress: called about once a second (see :data:`ProgressCallback`).
        crc32c: compute SCTP's CRC32c on every packet sent and check it on every packet
            received (RFC 9260 §6.8). ``False`` sends zero and checks nothing, to measure
            what the checksum costs on loopback (paper 002 removed it); never on a
            network. Such a run's scalars include ``real/<name>/crc32c_skipped``; both ends
            must agree (a checking end discards the other's packets).
    """
    raw = _core.real_sink(
        list(bind),
        port=port,
        udp_port=udp_port,
        preset=preset,
        sets=list(sets),
        time=time,
        once=once,
        check=check,
        max_associations=max_associations,
        faults=list(faults),
        pcap=_capture(capture_dir, "sink.pcap"),
        progress=progress,
        crc32c=crc32c,
    )
    return _result(raw, preset=preset, set=list(sets), check=check, crc32c=crc32c)


def send(
    bind: Sequence[str],
    peer: Sequence[str],
    *,
    peer_port: int = 5001,
    peer_udp_port: int = DEFAULT_UDP_PORT,
    port: int = 0,
    udp_port: int = DEFAULT_UDP_PORT,
    bytes: int | None = None,  # noqa: A002 - the CLI's name
    time: float | None = None,
    message_size: int = 1024,
    streams: int = 1,
    unordered: bool = False,
    preset: str = "rfc9260",
    sets: Iterable[str] = (),
    faults: Iterable[str] = (),
    capture_dir: str | os.PathLike[str] | None = None,
    progress: ProgressCallback | None = None,
    crc32c: bool = True,
) -> RunResult:
    """Open an association from ``bind`` to ``peer`` and send, then shut it down.

    Exactly one of ``bytes`` (whole messages; the last may be shorter) and ``time``
    (seconds from the association's establishment) is given. The first peer address is
    the primary. ``port`` is this side's SCTP port (0: the UDP port's number);
    ``udp_port`` 0 takes an ephemeral UDP port. Other arguments as for :func:`sink`; the capture is
    ``send.pcap``.
    """
    raw = _core.real_send(
        list(bind),
        list(peer),
        peer_port=peer_port,
        peer_udp_port=peer_udp_port,
        port=port,
        udp_port=udp_port,
        bytes=bytes,
        time=time,
        message_size=message_size,
        streams=streams,
        unordered=unordered,
        preset=preset,
        sets=list(sets),
        faults=list(faults),
        pcap=_capture(capture_dir, "send.pcap"),
        progress=progress,
        crc32c=crc32c,
    )
    return _result(raw, preset=preset, set=list(sets), crc32c=crc32c)
