"""``sctpsim real sink`` and ``sctpsim real send``: the engine on UDP sockets.

Both print progress once a second while running (unless ``--quiet``), then the same
summary tables as a simulated run, and write the same result files into ``--out``
(default ``results/real-sink`` / ``results/real-send``): ``scenario.toml`` (here a
description of the run), ``scalars.csv``, ``timeseries.parquet``, ``events.parquet``
and, with ``--pcap``, ``sink.pcap`` / ``send.pcap`` (IPv4/UDP/SCTP; ``tshark -d
udp.port==9899,sctp`` decodes it). Ctrl-C ends the run cleanly: the sender shuts its
association down, and the results up to that moment are written; the exit status is
then 130.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sctpsim._core import ScenarioError, SimulationError

# As every command, these import what they use when they run (tests/test_imports.py).
if TYPE_CHECKING:
    from sctpsim.results import RunResult

__all__ = ["real"]

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]i?)?[bB]?\s*$")
_SIZE_UNITS = {
    None: 1,
    "k": 1000,
    "m": 1000**2,
    "g": 1000**3,
    "ki": 1024,
    "mi": 1024**2,
    "gi": 1024**3,
}


def parse_size(text: str) -> int:
    """``100MB`` (10^8), ``64KiB`` (65536), ``1500`` as bytes."""
    m = _SIZE.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a size (e.g. 1500, 64KiB, 100MB)")
    unit = m.group(2).lower() if m.group(2) else None
    return int(float(m.group(1)) * _SIZE_UNITS[unit])


def parse_time(text: str) -> float:
    """``10s``, ``500ms``, ``2.5`` as seconds."""
    t = text.strip()
    try:
        if t.endswith("ms"):
            v = float(t[:-2]) / 1000
        elif t.endswith("s"):
            v = float(t[:-1])
        elif t.endswith("min"):
            v = float(t[:-3]) * 60
        else:
            v = float(t)
    except ValueError:
        raise ValueError(f"{text!r} is not a time (e.g. 10s, 500ms)") from None
    if not v > 0:
        raise ValueError(f"{text!r} is not a positive time")
    return v


def _converter(parse: Callable[[str], Any]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(_ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return None
        try:
            return parse(value)
        except ValueError as e:
            raise click.BadParameter(str(e), param=param) from None

    return callback


def _addr_list(text: str) -> list[str]:
    parts = [a.strip() for a in text.split(",") if a.strip()]
    if not parts:
        raise ValueError("expected ADDR[,ADDR...]")
    return parts


def _validate_sets(_ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    for v in values:
        key, sep, _ = v.partition("=")
        if not sep or not key.startswith("sctp.") or len(key) <= len("sctp."):
            raise click.BadParameter(f"{v!r}: expected sctp.KEY=VALUE", param=param)
    return list(values)


_COMMON = [
    click.option(
        "--bind",
        required=True,
        metavar="ADDR[,ADDR...]",
        callback=_converter(_addr_list),
        help="Local IPv4 addresses, one UDP socket each (multihoming), e.g. 127.0.0.1,127.0.0.2.",
    ),
    click.option(
        "--udp-port",
        type=click.IntRange(0, 65535),
        default=9899,
        show_default=True,
        help="Local UDP encapsulation port (RFC 6951; 0: any free port).",
    ),
    click.option(
        "--preset",
        default="rfc9260",
        show_default=True,
        help="SCTP parameter preset (rfc9260, rfc4960, linux, freebsd, freebsd-cmt).",
    ),
    click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="sctp.KEY=VALUE",
        callback=_validate_sets,
        help="An SCTP parameter, as a scenario's apps[].sctp key (repeatable; see 'sctpsim params').",
    ),
    click.option(
        "--fault",
        "faults",
        multiple=True,
        metavar="ADDR@TIME[:SHARE]",
        help="Drop SHARE (default 1: all) of the packets through local address ADDR from TIME "
        "on, both directions (repeatable), e.g. 127.0.0.1@2s (from the start) or "
        "127.0.0.1@established+500ms (from the first association's establishment).",
    ),
    click.option("--pcap", is_flag=True, help="Capture the packets sent and received into DIR."),
    click.option(
        "--out",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        metavar="DIR",
        help="Output directory (default results/real-sink or results/real-send); replaced if it exists.",
    ),
    click.option("--quiet", "-q", is_flag=True, help="No progress or tables; print only DIR."),
    click.option(
        "--no-crc32c",
        "no_crc32c",
        is_flag=True,
        help="Send zero instead of SCTP's CRC32c and check none (RFC 9260 §6.8 requires it): only to "
        "measure its cost on loopback; both ends must agree. Never on a network.",
    ),
]


def _warn_crc32c(skipped: bool) -> None:
    if skipped:
        click.echo(
            "warning: --no-crc32c: SCTP checksums are neither sent nor checked (loopback measurements only)",
            err=True,
        )


def _common(f: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_COMMON):
        f = option(f)
    return f


@click.group(short_help="Run the SCTP engine over UDP sockets (SCTP over UDP, RFC 6951).")
def real() -> None:
    """The simulator's SCTP engine over real UDP sockets (SCTP over UDP, RFC 6951).

    \b
    Examples (two terminals):
      sctpsim real sink --bind 127.0.0.1,127.0.0.2 --once --check pattern
      sctpsim real send --bind 127.0.0.1,127.0.0.2 --udp-port 9900 \\
          --peer 127.0.0.1,127.0.0.2 --bytes 100MB --message-size 8KiB --fault 127.0.0.1@2s
    Against usrsctp's tsctp (its UDP port given with -E, ours with -U):
      /usr/lib/usrsctp/tsctp -E 9900 -p 5001                    # server
      sctpsim real send --bind 127.0.0.1 --peer 127.0.0.1 --peer-udp-port 9900 --bytes 100MB
    """


def _progress(quiet: bool) -> Callable[[float, int, int, bool], None] | None:
    if quiet:
        return None
    from sctpsim.summary import format_rate

    last = {"t": 0.0, "b": 0}

    def show(elapsed: float, nbytes: int, assocs: int, ending: bool) -> None:
        dt = elapsed - last["t"]
        rate = (nbytes - last["b"]) * 8 / dt if dt > 0 else 0.0
        last["t"], last["b"] = elapsed, nbytes
        state = "  ending" if ending else ""
        click.echo(
            f"{elapsed:7.1f} s  {nbytes / 1e6:12.3f} MB  {format_rate(rate):>12}  "
            f"{assocs} association{'s' if assocs != 1 else ''}{state}",
            err=True,
        )

    return show


def _finish(run: Callable[[Path | None], RunResult], out: Path | None, default: str, quiet: bool, pcap: bool) -> int:
    from sctpsim.cli import EXIT_FAILURE, EXIT_INTERRUPTED, _fail, _one_line
    from sctpsim.results import atomic_output_dir
    from sctpsim.summary import print_summary, summary_console

    dest = out if out is not None else Path("results") / default
    try:
        with atomic_output_dir(dest) as staging:
            try:
                result = run(staging if pcap else None)
            except ScenarioError as e:
                _fail(f"{e}")
            except (SimulationError, ValueError) as e:
                _fail(f"{_one_line(str(e))}", EXIT_FAILURE if isinstance(e, SimulationError) else 2)
            result.to_parquet(staging)
    except FileExistsError as e:
        _fail(_one_line(str(e)))
    except OSError as e:
        _fail(f"{dest}: {e.strerror or e}", EXIT_FAILURE)
    interrupted = bool(getattr(result, "interrupted", False))
    if quiet:
        click.echo(str(dest))
    else:
        console = summary_console()
        print_summary(result, console)
        console.print()
        click.echo(f"results: {dest}")
        if interrupted:
            click.echo("interrupted: results up to the interruption written", err=True)
    sys.stdout.flush()
    return EXIT_INTERRUPTED if interrupted else 0


@real.command(short_help="Accept associations and read everything.")
@_common
@click.option("--port", type=click.IntRange(1, 65535), default=5001, show_default=True, help="SCTP port.")
@click.option("--time", "time_", metavar="T", callback=_converter(parse_time), help="Run for T (e.g. 30s).")
@click.option("--once", is_flag=True, help="End when the first association has closed.")
@click.option(
    "--check",
    default="none",
    show_default=True,
    metavar="none|pattern|fill:N",
    help="Check the messages: an 'sctpsim real send' pattern, or every byte N (tsctp sends 98).",
)
@click.option(
    "--max-associations",
    type=click.IntRange(1, 1 << 20),
    default=256,
    show_default=True,
    help="Most associations at once; more are refused (ABORT, Out of Resource).",
)
def sink(
    bind: list[str],
    udp_port: int,
    preset: str,
    sets: list[str],
    faults: tuple[str, ...],
    pcap: bool,
    out: Path | None,
    quiet: bool,
    no_crc32c: bool,
    port: int,
    time_: float | None,
    once: bool,
    check: str,
    max_associations: int,
) -> int:
    """Accept SCTP associations on UDP and read everything sent.

    Runs until Ctrl-C, --time or (with --once) the end of the first association.
    """
    from sctpsim import real as api

    _warn_crc32c(no_crc32c)

    def run(capture: Path | None) -> RunResult:
        return api.sink(
            bind,
            port=port,
            udp_port=udp_port,
            preset=preset,
            sets=sets,
            time=time_,
            once=once,
            check=check,
            max_associations=max_associations,
            faults=faults,
            capture_dir=capture,
            progress=_progress(quiet),
            crc32c=not no_crc32c,
        )

    return _finish(run, out, "real-sink", quiet, pcap)


@real.command(short_help="Send to a peer, then shut down.")
@_common
@click.option(
    "--peer",
    required=True,
    metavar="ADDR[,ADDR...]",
    callback=_converter(_addr_list),
    help="The peer's addresses; the first is the primary.",
)
@click.option("--peer-port", type=click.IntRange(1, 65535), default=5001, show_default=True, help="Peer's SCTP port.")
@click.option(
    "--peer-udp-port",
    type=click.IntRange(1, 65535),
    default=9899,
    show_default=True,
    help="Peer's UDP encapsulation port until it is heard from (RFC 6951 §5.4).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="This side's SCTP port (0: the UDP port's).")
@click.option("--bytes", "nbytes", metavar="N", callback=_converter(parse_size), help="Send N bytes (e.g. 100MB).")
@click.option("--time", "time_", metavar="T", callback=_converter(parse_time), help="Send for T (e.g. 10s).")
@click.option(
    "--message-size",
    metavar="S",
    default="1024",
    show_default=True,
    callback=_converter(parse_size),
    help="Bytes per message.",
)
@click.option("--streams", type=click.IntRange(1, 65535), default=1, show_default=True, help="Streams, round robin.")
@click.option("--unordered", is_flag=True, help="Unordered messages.")
def send(
    bind: list[str],
    udp_port: int,
    preset: str,
    sets: list[str],
    faults: tuple[str, ...],
    pcap: bool,
    out: Path | None,
    quiet: bool,
    no_crc32c: bool,
    peer: list[str],
    peer_port: int,
    peer_udp_port: int,
    port: int,
    nbytes: int | None,
    time_: float | None,
    message_size: int,
    streams: int,
    unordered: bool,
) -> int:
    """Open an association to a peer and send (a byte count or for a time), then shut it down."""
    from sctpsim import real as api

    _warn_crc32c(no_crc32c)

    if (nbytes is None) == (time_ is None):
        raise click.UsageError("give exactly one of --bytes and --time")

    def run(capture: Path | None) -> RunResult:
        return api.send(
            bind,
            peer,
            peer_port=peer_port,
            peer_udp_port=peer_udp_port,
            port=port,
            udp_port=udp_port,
            bytes=nbytes,
            time=time_,
            message_size=message_size,
            streams=streams,
            unordered=unordered,
            preset=preset,
            sets=sets,
            faults=faults,
            capture_dir=capture,
            progress=_progress(quiet),
            crc32c=not no_crc32c,
        )

    return _finish(run, out, "real-send", quiet, pcap)
