"""The ``sctpsim`` command line.

Commands::

    sctpsim run FILE [--seed N] [--out DIR] [--set KEY=VALUE ...] [--report] [--quiet]
    sctpsim show DIR [--width PX]
    sctpsim check FILE... [--set KEY=VALUE ...] [--print]
    sctpsim params [--markdown]
    sctpsim sweep FILE [--jobs N] [--out DIR] [--dask ADDRESS|local] [--quiet] [--dry-run]
    sctpsim plot DIR --x PARAM --y METRIC [--y METRIC ...] [--hue PARAM] [--kind line|heatmap]
                 [--where KEY=VALUE ...]
    sctpsim compare DIR_A DIR_B [--rtol X] [--all]
    sctpsim reproduce --list | NAME [--quick] [--jobs N] [--dask ADDRESS|local] [--out DIR]
    sctpsim real sink --bind ADDR[,ADDR...] [--port P] [--udp-port U] [--time T] [--once] ...
    sctpsim real send --bind ADDR[,ADDR...] --peer ADDR[,ADDR...] [--bytes N | --time T] ...

Error handling is uniform and script-friendly: every expected failure prints exactly
one line ``error: ...`` on stderr — never a traceback — and exits with

* 2 for anything wrong with the input: scenario errors, unreadable files, bad
  ``--set`` values, command-line usage errors;
* 1 when the simulation itself fails or results cannot be written (for a sweep:
  when any run failed, after every other run has finished and been stored); for
  ``compare``, when the two results differ (no ``error:`` line then: the table says how);
* 130 when interrupted (Ctrl-C).

click runs with ``standalone_mode=False`` so that its own usage errors go through
the same path instead of click's multi-line "Usage: ... Error: ..." output. A
command group given no command (``sctpsim``, ``sctpsim real``) prints its help.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from sctpsim import _core
from sctpsim._core import ScenarioError, SimulationError

# Each command imports what it uses when it runs: `sctpsim --version` and `--help` load
# neither rich nor anything of the results, and `sctpsim run` none of numpy, pandas or
# pyarrow (tests/test_imports.py holds it to that).
if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["cli", "main", "params_markdown"]

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: Where ``sctpsim run`` writes when ``--out`` is not given: ``results/<name>``.
DEFAULT_RESULTS_ROOT = Path("results")


class CliError(Exception):
    """An expected failure: reported as one ``error:`` line, then exit ``code``."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    raise CliError(message, code)


def _one_line(message: str) -> str:
    """Collapse a message to a single line (multi-line messages would break the contract)."""
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


# ------------------------------------------------------------------ helpers


def _read_scenario(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        _fail(f"{path}: no such file")
    except IsADirectoryError:
        _fail(f"{path}: is a directory, expected a scenario TOML file")
    except UnicodeDecodeError as e:
        _fail(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})")
    except OSError as e:
        _fail(f"{path}: cannot read: {e.strerror or e}")


def _validate_overrides(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> list[str]:
    """Reject ``--set`` values that are not ``KEY=VALUE``, or not UTF-8 text, before the
    core sees them."""
    for value in values:
        key, sep, _ = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(
                f"{value!r} is not KEY=VALUE (for example --set duration=30s)",
                param_hint="'--set'",
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # Bytes that are not UTF-8 reach Python as lone surrogates: show them as \xNN.
            shown = value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise click.BadParameter(
                f"'{shown}' is not UTF-8 text", param_hint="'--set'"
            ) from None
    return list(values)


@contextlib.contextmanager
def _runner_errors() -> Iterator[None]:
    """The failures of commands that run sweeps (``sweep``, ``reproduce``): one line each."""
    from sctpsim.runner import ExecutorError
    from sctpsim.store import StoreError

    try:
        yield
    except StoreError as e:
        _fail(_one_line(str(e)))
    except ExecutorError as e:
        _fail(_one_line(str(e)), EXIT_FAILURE)
    except KeyboardInterrupt:
        _fail(
            "interrupted; finished runs are stored, rerun the same command to resume",
            EXIT_INTERRUPTED,
        )
    except OSError as e:
        _fail(f"writing results: {_one_line(str(e))}", EXIT_FAILURE)


def _check_out_dir(dest: Path) -> None:
    """Fail with one line when the folder that would hold the output directory ``dest`` is
    a file (creating ``dest`` would fail with a bare "[Errno 17] File exists")."""
    for parent in dest.parents:
        if parent.exists():
            if not parent.is_dir():
                _fail(f"{dest}: cannot create it: {parent} is not a directory")
            return


def _scenario_error(path: str, error: ScenarioError) -> NoReturn:
    _fail(f"{path}: {_one_line(str(error))}")


def _scenario_name(resolved: str, fallback: str) -> str:
    """The scenario's ``name`` from the resolved TOML, for the default output directory.

    The name is needed *before* running (the core writes captures straight into
    the output directory), so it is read from what ``check`` resolved; the file
    stem is a fallback that should never be needed.
    """
    import tomllib

    try:
        name = tomllib.loads(resolved).get("name")
    except tomllib.TOMLDecodeError:  # the core wrote it, so this is not expected
        return fallback
    return name if isinstance(name, str) and name else fallback


def _safe_dir_name(name: str) -> str:
    """Make ``name`` a single harmless path component (no separators, no ``..``)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("._") or "scenario"


#: Below this many columns the keys are listed one block each instead of as a table: the
#: key column alone takes up to 48 columns, and the table's other four would be squeezed
#: into a few characters each.
PARAMS_TABLE_MIN_WIDTH = 120


def _print_params_table(params: list[dict[str, Any]], console: Console) -> None:
    from rich.table import Table
    from rich.text import Text

    if console.width < PARAMS_TABLE_MIN_WIDTH:
        _print_params_list(params, console)
        return
    table = Table(
        title="Scenario keys",
        title_justify="left",
        title_style="bold",
        show_lines=True,
        expand=True,
    )
    # Keys never wrap (they are what people copy into --set); the prose columns
    # wrap, with the description getting the most room; a word longer than its
    # column (dot11AuthenticationResponseTimeout) is folded, never cut.
    table.add_column("key", no_wrap=True)
    table.add_column("type", ratio=2, overflow="fold")
    table.add_column("default", ratio=2, overflow="fold")
    table.add_column("unit", ratio=1, overflow="fold")
    table.add_column("description", ratio=5, overflow="fold")
    for p in params:
        # Text, not markup: "[x, y]" in a type or description is text to show.
        cells = (p["key"], p["type"], _param_default(p), p.get("unit") or "", p.get("doc") or "")
        table.add_row(*(Text(c) for c in cells))
    console.print(table)


def _print_params_list(params: list[dict[str, Any]], console: Console) -> None:
    """The keys for a narrow terminal: the key with its type, default and unit on one
    line, the description below it, indented."""
    from rich.padding import Padding
    from rich.text import Text

    console.print(Text("Scenario keys", style="bold"))
    for p in params:
        facts = [p["type"], f"default {_param_default(p)}"]
        if p.get("unit"):
            facts.append(f"unit {p['unit']}")
        console.print()
        console.print(Text.assemble((p["key"], "bold"), f"  ({'; '.join(facts)})"), overflow="fold")
        if p.get("doc"):
            console.print(Padding(Text(p["doc"], overflow="fold"), (0, 0, 0, 4), expand=False))


def _param_default(p: dict[str, Any]) -> str:
    default = p.get("default")
    return "(required)" if default is None else str(default)


def _md_cell(text: str) -> str:
    """Escape text for a Markdown table cell.

    Pipes would split the cell and newlines end the row; ``<`` and ``&`` would be
    taken as HTML (docs mention placeholders such as ``"eth<i>"``).
    """
    text = _one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|")


def _md_code(text: str) -> str:
    """A code span for a cell. Only pipes need escaping inside one (GFM tables)."""
    if not text:
        return ""
    escaped = _one_line(text).replace("|", "\\|")
    return f"`{escaped}`"


def _md_default(default: object) -> str:
    """A default value: code when it is a value (``10s``), prose when it explains."""
    if default is None:
        return "*required*"
    text = str(default)
    # Some keys have no fixed default; the core then describes what happens
    # instead ("the two node names joined by ..."), which reads better as text.
    return _md_cell(text) if " " in text.strip() else _md_code(text)


def params_markdown(params: list[dict[str, Any]]) -> str:
    """Render :func:`sctpsim._core.params` as a complete Markdown reference page.

    The output is deterministic (no dates, no version) so the generated
    ``docs/scenario-reference.md`` only changes when the keys do.
    """
    lines = [
        "# Scenario reference",
        "",
        "<!-- Generated by `sctpsim params --markdown`; do not edit by hand. -->",
        "",
        "A scenario is a TOML file describing the network (nodes, links, routes), the",
        "traffic, the faults to inject and what to record. This page lists every key",
        "the simulator accepts. Keys marked *required* have no default; every other key",
        "may be left out. `sctpsim check FILE --print` shows a scenario with all",
        "defaults filled in.",
        "",
        "## Key paths",
        "",
        "A key path such as `links[].delay` names the `delay` key of each entry of the",
        "`links` array of tables (`[[links]]` in TOML). On the command line, overrides",
        "address one entry by index, starting at 0:",
        "",
        "```sh",
        "sctpsim run scenario.toml --set duration=30s --set links[0].delay=20ms",
        "```",
        "",
        "## Units",
        "",
        "Quantities are written as strings: a number, then a unit (a space between them",
        'is allowed). The number may have an exponent, as in `"1e6bps"` or `"5e-3s"`.',
        "Sizes may also be a plain integer number of bytes. The *Unit* column of the",
        "tables below gives the unit a value is converted to.",
        "",
        "| Kind | Examples | Units |",
        "|---|---|---|",
        '| duration | `"30ms"`, `"1.5s"`, `"2us"` | `ns`, `us` (or `µs`), `ms`, `s`, `min`, `h` |',
        '| rate | `"1Gbps"`, `"100Mbit/s"`, `"64kbps"` | `bps`, `kbps`, `Mbps`, `Gbps`, `Tbps` '
        "or `bit/s`, `kbit/s`, ... (powers of 1000) |",
        '| size | `"1500B"`, `"64KiB"`, `"1MB"` | `B`; `kB`, `MB`, `GB` (powers of 1000); '
        "`KiB`, `MiB`, `GiB` (powers of 1024) |",
        "",
        "A value that fails to parse is reported with its key path and a suggestion, for",
        'example `links[2].delay: "30 sm" is not a duration (try "30ms")`.',
        "",
    ]

    # Group by the first path component ("links[]", "flows[]", ...); top-level
    # scalar keys come first under their own heading. Order follows params().
    groups: dict[str, list[dict[str, Any]]] = {}
    for p in params:
        key = str(p["key"])
        head = key.split(".", 1)[0] if "." in key else ""
        groups.setdefault(head, []).append(p)

    for head, items in sorted(groups.items(), key=lambda kv: kv[0] != ""):
        if head:
            toml_form = f"[[{head[:-2]}]]" if head.endswith("[]") else f"[{head}]"
            lines += [f"## `{head}`", "", f"Written as `{toml_form}` in TOML.", ""]
        else:
            lines += ["## Top-level keys", ""]
        lines += [
            "| Key | Type | Default | Unit | Description |",
            "|---|---|---|---|---|",
        ]
        for p in items:
            lines.append(
                "| "
                + " | ".join(
                    [
                        _md_code(str(p["key"])),
                        _md_cell(str(p["type"])),
                        _md_default(p.get("default")),
                        _md_code(str(p.get("unit") or "")),
                        _md_cell(str(p.get("doc") or "")),
                    ]
                )
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


# ----------------------------------------------------------------- commands

_SET_OPTION = click.option(
    "--set",
    "overrides",
    metavar="KEY=VALUE",
    multiple=True,
    callback=_validate_overrides,
    help="Override a scenario key (repeatable), e.g. --set duration=30s "
    "--set links[0].delay=20ms. See 'sctpsim params'.",
)

# Paths stay strings so error messages show them exactly as typed.
_FILE_ARG = click.argument("file", type=click.Path(), metavar="FILE")


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(
    version=_core.__version__, prog_name="sctpsim", message="%(prog)s %(version)s"
)
def cli() -> None:
    """Deterministic SCTP / IP network simulator.

    A scenario is a TOML file describing nodes, links, traffic and faults. The same
    scenario and seed always give byte-identical results.

    \b
    Examples:
      sctpsim run examples/two-path-cbr.toml
      sctpsim run examples/two-path-cbr.toml --seed 7 --set duration=10s --out /tmp/r
      sctpsim run examples/failover.toml --set record.packets=true --report
      sctpsim show results/failover
      sctpsim check examples/*.toml
      sctpsim params --markdown > docs/scenario-reference.md
      sctpsim sweep examples/sweeps/two-path-delay.toml --jobs 4
      sctpsim plot results/two-path-delay --x 'links[1].delay' --y flow/path1/delay_mean
      sctpsim compare results/failover /tmp/failover-new
      sctpsim reproduce --list
      sctpsim reproduce failover-tuning --quick
      sctpsim real sink --bind 127.0.0.1,127.0.0.2 --once
      sctpsim real send --bind 127.0.0.1 --udp-port 0 --peer 127.0.0.1,127.0.0.2 --bytes 100MB

    Errors are reported as one line starting with "error:"; the exit status is 2 for
    invalid input, 1 for a failed run.
    """


@cli.command()
@_FILE_ARG
@click.option(
    "--seed",
    # The scenario schema stores the seed as a TOML integer (signed 64-bit), and
    # scenario.toml must be re-runnable, hence the upper bound.
    type=click.IntRange(0, 2**63 - 1),
    default=None,
    metavar="N",
    help="Master RNG seed (0 to 2^63-1), overriding the scenario's 'seed' key; "
    "the seed used is recorded in scenario.toml.",
)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Output directory. Default: results/<scenario name>. "
    "An existing results directory is replaced.",
)
@_SET_OPTION
@click.option(
    "--report",
    is_flag=True,
    help="Also write DIR/report.html and the figures (as 'sctpsim show DIR' does).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the output directory.")
def run(
    file: str, seed: int | None, out: Path | None, overrides: list[str], report: bool, quiet: bool
) -> None:
    """Run the scenario in FILE and write its results.

    The output directory receives scenario.toml (the resolved scenario, with seed
    and version), scalars.csv, timeseries.parquet, events.parquet and any pcap
    captures the scenario asks for, and packets.parquet with record.packets = true;
    with --report also report.html and its figures. It appears atomically: a failed
    or interrupted run leaves the previous results (if any) untouched.

    \b
    Examples:
      sctpsim run examples/two-path-cbr.toml
      sctpsim run examples/two-path-cbr.toml --seed 42 --set duration=5s
      sctpsim run scenario.toml --out results/baseline --quiet
      sctpsim run examples/failover.toml --set record.packets=true --report
    """
    from sctpsim.results import RunResult, atomic_output_dir

    text = _read_scenario(file)
    # Validate first: an invalid scenario must not create any directory.
    try:
        resolved = _core.check(text, overrides)
    except ScenarioError as e:
        _scenario_error(file, e)
    name = _scenario_name(resolved, fallback=Path(file).stem)
    dest = out if out is not None else DEFAULT_RESULTS_ROOT / _safe_dir_name(name)
    _check_out_dir(dest)

    try:
        with atomic_output_dir(dest) as staging:
            try:
                # The core writes scalars.csv and the Parquet tables into the staging
                # directory as the run ends (no pandas or pyarrow on this path).
                raw = _core.run(text, overrides, seed, str(staging), str(staging))
                result = RunResult(raw)
                result.write_scenario(staging)
            except ScenarioError as e:  # run validates again; same report as above
                _scenario_error(file, e)
            except SimulationError as e:
                _fail(f"{file}: simulation failed: {_one_line(str(e))}", EXIT_FAILURE)
            except OSError as e:
                _fail(f"writing results to {dest}: {_one_line(str(e))}", EXIT_FAILURE)
            if report:
                from sctpsim.runreport import write_run_report

                try:
                    write_run_report(staging, result)
                except OSError as e:
                    _fail(f"writing the report in {dest}: {_one_line(str(e))}", EXIT_FAILURE)
    except FileExistsError as e:
        _fail(_one_line(str(e)))
    except OSError as e:  # creating / renaming the directory
        _fail(f"{dest}: {e.strerror or e}", EXIT_FAILURE)
    except KeyboardInterrupt:
        # Handled here rather than by click, which would print an extra blank line;
        # the staging directory has already been removed by atomic_output_dir.
        _fail("interrupted, nothing written", EXIT_INTERRUPTED)

    if not quiet:
        from sctpsim.summary import print_summary, summary_console

        console = summary_console()
        print_summary(result, console)
        console.print()
        click.echo(f"results: {dest}")
        if report:
            click.echo(f"report: {dest / 'report.html'}")
    else:
        click.echo(str(dest))


@cli.command(short_help="Write the HTML page and figures of a run.")
@click.argument("directory", type=click.Path(), metavar="DIR")
@click.option(
    "--width",
    type=click.IntRange(400, 4000),
    default=1100,
    show_default=True,
    metavar="PX",
    help="Figure width in pixels.",
)
def show(directory: str, width: int) -> None:
    """Write DIR/report.html for the run in DIR (a 'sctpsim run' output directory).

    The page is one self-contained file (figures inline, no script, nothing fetched):
    the scenario (name, seed, version, keys that differ from the defaults), the
    summary tables, and figures: per SCTP association cwnd, ssthresh, flight size,
    SRTT, RTO and state per path with faults and SCTP events marked, and its
    time-sequence graph (with record.packets = true); the same for each TCP
    connection; goodput per flow; queues and drops. Each figure is also written as
    DIR/figure-*.png and .svg. What the run did not record is listed on the page.

    \b
    Examples:
      sctpsim run examples/failover.toml --set record.packets=true
      sctpsim show results/failover
    """
    from sctpsim.results import RESULT_FILES, SCENARIO_FILE
    from sctpsim.runreport import write_run_report

    d = Path(directory)
    if not (d / SCENARIO_FILE).is_file():
        _fail(f"{directory}: not a run directory (no {SCENARIO_FILE})")
    for name in RESULT_FILES:
        if not (d / name).is_file():
            _fail(f"{directory}: {name}: no such file (not a complete run directory)")
    try:
        written = write_run_report(d, width=width)
    except FileNotFoundError as e:
        # pyarrow gives the path as the message, without a filename.
        missing = e.filename or (e.args[0] if e.args else "a result file")
        _fail(f"{directory}: {Path(str(missing)).name}: no such file")
    except ValueError as e:
        _fail(f"{directory}: {_one_line(str(e))}")
    except OSError as e:
        _fail(f"writing the report in {directory}: {_one_line(str(e))}", EXIT_FAILURE)
    click.echo(str(written.html))


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(), metavar="FILE...")
@_SET_OPTION
@click.option(
    "--print",
    "print_resolved",
    is_flag=True,
    help="Print the resolved scenario (all defaults filled in) on stdout; "
    "the 'ok' line then goes to stderr.",
)
def check(files: tuple[str, ...], overrides: list[str], print_resolved: bool) -> None:
    """Validate scenario FILE(s) without running them.

    Prints "FILE: ok" for each valid file. The first invalid file stops the check
    with one "error:" line and exit status 2.

    \b
    Examples:
      sctpsim check examples/two-path-cbr.toml
      sctpsim check examples/*.toml
      sctpsim check scenario.toml --set duration=30s --print > resolved.toml
    """
    for file in files:
        text = _read_scenario(file)
        try:
            resolved = _core.check(text, overrides)
        except ScenarioError as e:
            _scenario_error(file, e)
        if print_resolved:
            # Keep stdout pure TOML so it can be redirected into a file.
            click.echo(f"{file}: ok", err=True)
            click.echo(resolved, nl=not resolved.endswith("\n"))
        else:
            click.echo(f"{file}: ok")


@cli.command(short_help="List every scenario key.")
@click.option(
    "--markdown",
    is_flag=True,
    help="Print a complete Markdown reference page instead of a table.",
)
def params(markdown: bool) -> None:
    """List every scenario key with its type, default, unit and description.

    \b
    Examples:
      sctpsim params
      sctpsim params --markdown > docs/scenario-reference.md
    """
    from sctpsim.summary import summary_console

    items = [dict(p) for p in _core.params()]
    if markdown:
        click.echo(params_markdown(items), nl=False)
    else:
        _print_params_table(items, summary_console())


_SWEEP_HELP = """Run the sweep in FILE: a grid of parameters x replications, in parallel.

\b
A sweep file (TOML; full reference in docs/sweeps.md):
  scenario = "base.toml"          # base scenario, relative to this file
  seed = 1                        # master seed; each run's seed derives from it
  replications = 5                # runs per parameter combination
  metrics = ["flow/path1/goodput", "flow/*/loss_rate"]   # KIND/ENTITY/METRIC
  [set]                           # fixed overrides for every run
  duration = "5s"
  [grid]                          # cartesian product (quote key paths)
  "links[1].delay" = ["10ms", "20ms", "40ms"]
  [[zip]]                         # lists varied together, equal lengths
  "apps[2].rate" = ["2Mbps", "4Mbps"]
  "apps[2].packet_size" = ["500B", "1000B"]

Each finished run is written at once to DIR/runs/ (default results/<name>).
Rerunning the same command resumes: finished runs are skipped, failed ones
retried; a run whose resolved inputs changed (sweep, scenario or sctpsim
version) is run again. At the end, DIR/runs.parquet holds one row per run
(parameters, seed, status, error, one column per scalar) and DIR/summary.csv
the n, mean, stdev and 95% confidence interval (Student t) per combination
and metric. Failed runs are listed, and make the exit status 1.

\b
Examples:
  sctpsim sweep examples/sweeps/two-path-delay.toml
  sctpsim sweep sweep.toml --jobs 8 --out results/delay
  sctpsim sweep sweep.toml --dask local --jobs 4
  sctpsim sweep sweep.toml --dask tcp://scheduler.example:8786
  sctpsim sweep sweep.toml --dry-run      # check it and list the runs
"""


_JOBS_OPTION = click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, None),
    default=None,
    metavar="N",
    help="Parallel runs (local processes, or workers with --dask local). "
    "Default: one per CPU; 1 runs in this process.",
)



def _validate_dask(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise click.BadParameter(
            "expected 'local' or a scheduler address such as tcp://127.0.0.1:8786",
            param_hint="'--dask'",
        )
    return value


_DASK_OPTION = click.option(
    "--dask",
    default=None,
    metavar="ADDRESS|local",
    callback=_validate_dask,
    help="Run on a Dask cluster: 'local' starts one here; an address such as "
    "tcp://host:8786 uses an existing scheduler (see docs/sweeps.md for Slurm/PBS).",
)


@cli.command(help=_SWEEP_HELP, short_help="Run a parameter sweep with replications.")
@_FILE_ARG
@_JOBS_OPTION
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Results directory. Default: results/<sweep name>. An existing one is resumed.",
)
@_DASK_OPTION
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or tables; print only DIR.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check the sweep file and list the runs, and how many DIR already holds; run nothing.",
)
def sweep(
    file: str, jobs: int | None, out: Path | None, dask: str | None, quiet: bool, dry_run: bool
) -> None:
    from rich.console import Console
    from rich.text import Text

    from sctpsim.runner import plan_sweep, run_sweep
    from sctpsim.stats import MetricError
    from sctpsim.summary import summary_console, sweep_tables
    from sctpsim.sweep import SweepError, load_sweep

    try:
        definition = load_sweep(file)
    except SweepError as e:
        _fail(f"{file}: {_one_line(str(e))}")
    if out is not None:
        _check_out_dir(out)
    if dry_run:
        _print_plan(definition, plan_sweep(definition, out))
        return
    with _runner_errors():
        try:
            outcome = run_sweep(
                definition,
                out,
                jobs=jobs,
                dask=dask,
                progress=False if quiet else Console(stderr=True),
            )
        except SweepError as e:
            _fail(f"{file}: {_one_line(str(e))}")
        except MetricError as e:
            _fail(
                f"{file}: {e.key}: {_one_line(str(e))} "
                "(the runs are stored; rerun after fixing it)"
            )

    failed = len(outcome.failed)
    if quiet:
        click.echo(str(outcome.directory))
    else:
        console = summary_console()
        console.print(
            f"[bold]{definition.name}[/bold]  {outcome.total} runs: {outcome.total - failed} ok, "
            f"{failed} failed  ({outcome.executed} run now, {outcome.reused} reused)"
        )
        for item in sweep_tables(outcome.summary, outcome.failed, definition.parameters):
            if isinstance(item, Text):
                console.print()
            console.print(item)
        console.print()
        click.echo(f"results: {outcome.directory}")
    if failed:
        _fail(
            f"{failed} of {outcome.total} runs failed; rerun the same command to retry them",
            EXIT_FAILURE,
        )


def _print_plan(definition: Any, plan: Any) -> None:
    """``sctpsim sweep --dry-run``: the combinations, the run count and the store's state."""
    from rich.table import Table

    from sctpsim.summary import summary_console

    points = definition.points()
    params = definition.parameters
    console = summary_console()
    console.print(
        f"[bold]{definition.name}[/bold]  {len(points)} combinations x "
        f"{definition.replications} replications = {len(plan.runs)} runs"
    )
    table = Table(title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    for p in params:
        table.add_column(p, no_wrap=True)
    table.add_column("stored", justify="right", no_wrap=True)
    table.add_column("note")
    for i, point in enumerate(points):
        specs = [r for r in plan.runs if r.point == i]
        stored = sum(r.run_id in plan.done for r in specs)
        invalid = next((r.error for r in specs if r.error), None)
        table.add_row(
            str(i),
            *(v if isinstance(v, str) else str(v) for v in point.values()),
            f"{stored}/{len(specs)}",
            invalid or "",
        )
    console.print(table)
    click.echo(
        f"{plan.directory}: {len(plan.done)} finished, {len(plan.failed)} failed, "
        f"{plan.to_run} to run"
    )


def _parse_where(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(
                f"{value!r} is not KEY=VALUE (for example --where 'links[0].delay=10ms')",
                param_hint="'--where'",
            )
        out[key.strip()] = text.strip()
    return out


@cli.command(short_help="Plot a sweep's metric against a parameter.")
@click.argument("directory", type=click.Path(), metavar="DIR")
@click.option(
    "--x", "x", required=True, metavar="PARAM", help="Parameter for the x axis (a key path)."
)
@click.option(
    "--y",
    "y",
    required=True,
    multiple=True,
    metavar="METRIC",
    help="Scalar for the y axis, e.g. flow/path1/goodput; repeat it for one panel per metric.",
)
@click.option(
    "--hue",
    default=None,
    metavar="PARAM",
    help="Parameter drawn as one line per value (the rows of a heatmap).",
)
@click.option(
    "--kind",
    type=click.Choice(["line", "heatmap"]),
    default="line",
    show_default=True,
    help="line: mean with 95%% CI error bars; heatmap: the mean over --x (columns) "
    "and --hue (rows).",
)
@click.option(
    "--where",
    multiple=True,
    metavar="KEY=VALUE",
    callback=_parse_where,
    help="Keep only runs with this parameter value (repeatable); needed when "
    "parameters other than --x and --hue vary.",
)
@click.option(
    "--out",
    default=None,
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="Output path without suffix. Default: DIR/plots/<y>_vs_<x>[_by_<hue>] "
    "(<y>_heatmap_<x>_by_<hue> for a heatmap; several metrics joined by '+').",
)
def plot(
    directory: str,
    x: str,
    y: tuple[str, ...],
    hue: str | None,
    kind: str,
    where: dict[str, str],
    out: Path | None,
) -> None:
    """Draw METRIC against PARAM from a finished sweep in DIR, as PNG and SVG.

    Each point is the mean over the replications, with the 95% confidence
    interval (Student t) as error bars (none for a point with one run). Durations, rates and sizes on the x axis
    are converted to s, bit/s and B. With --kind heatmap, --x and --hue span a
    grid and each cell shows the mean. Several --y give one panel each.

    \b
    Examples:
      sctpsim plot results/delay --x 'links[1].delay' --y flow/path1/delay_mean
      sctpsim plot results/delay --x 'links[1].delay' --y flow/path1/goodput --hue 'links[3].loss.p'
      sctpsim plot results/delay --x 'links[1].delay' --y flow/path1/goodput --where 'links[3].loss.p=0.01'
      sctpsim plot results/delay --x 'links[1].delay' --hue 'links[3].loss.p' --kind heatmap --y flow/path1/goodput
      sctpsim plot results/delay --x 'links[1].delay' --y flow/path1/goodput --y flow/path1/delay_mean
    """
    from sctpsim.plot import PlotError, plot_sweep
    from sctpsim.store import StoreError

    try:
        paths = plot_sweep(directory, x, list(y), hue=hue, where=where, out=out, kind=kind)
    except StoreError as e:
        _fail(_one_line(str(e)))
    except PlotError as e:
        _fail(f"{directory}: {_one_line(str(e))}")
    except OSError as e:
        _fail(f"writing plot: {_one_line(str(e))}", EXIT_FAILURE)
    for path in paths:
        click.echo(str(path))


@cli.command(short_help="Compare the scalars of two runs or two sweeps.")
@click.argument("dir_a", type=click.Path(), metavar="DIR_A")
@click.argument("dir_b", type=click.Path(), metavar="DIR_B")
@click.option(
    "--rtol",
    type=click.FloatRange(0.0, None),
    default=0.0,
    show_default=True,
    metavar="X",
    help="Relative tolerance: a and b are equal when |b - a| <= X * max(|a|, |b|).",
)
@click.option("--all", "all_", is_flag=True, help="List every scalar, not only those that differ.")
def compare(dir_a: str, dir_b: str, rtol: float, all_: bool) -> int:
    """Compare DIR_B against DIR_A: two 'sctpsim run' directories, or two sweeps.

    Prints the scalars side by side (those that differ; --all for every one) with
    the absolute difference B - A and the relative one (B - A) / |A|. Runs of two
    sweeps are matched by their parameter values and replication; runs on one side
    only are listed.

    Exit status: 0 when everything is equal within --rtol, 1 when something differs
    or is unmatched, 2 when the input cannot be compared.

    \b
    Examples:
      sctpsim compare results/failover /tmp/failover-new
      sctpsim compare results/two-path-delay /tmp/two-path-delay --rtol 1e-9
    """
    from rich.table import Table
    from rich.text import Text

    from sctpsim.compare import CompareError, compare_results
    from sctpsim.summary import summary_console

    try:
        diff = compare_results(dir_a, dir_b, rtol=rtol)
    except CompareError as e:
        _fail(_one_line(str(e)))
    console = summary_console()
    shown = diff.frame if all_ else diff.differences
    if len(shown):
        table = Table(
            title=f"{'Scalars' if all_ else 'Scalars that differ'} (A = {dir_a}, B = {dir_b})",
            title_justify="left",
            title_style="bold",
        )
        for key in diff.keys:
            table.add_column(key, overflow="fold")
        table.add_column("scalar", overflow="fold")
        table.add_column("unit")
        for name in ("A", "B", "B − A", "(B − A)/|A|"):
            table.add_column(name, justify="right", no_wrap=True)
        if all_:
            table.add_column("")
        for _, r in shown.iterrows():
            cells = [str(r[k]) for k in diff.keys]
            cells += [
                str(r["scalar"]),
                str(r["unit"]),
                _compare_number(r["a"]),
                _compare_number(r["b"]),
                _compare_number(r["abs_diff"], 4),
                "–" if r["rel_diff"] != r["rel_diff"] else f"{100 * r['rel_diff']:+.4g} %",
            ]
            if all_:
                cells.append("=" if r["equal"] else "≠")
            table.add_row(*(Text(c) for c in cells))
        console.print(table)
    for side, runs in (("A", diff.only_a), ("B", diff.only_b)):
        for run in runs:
            console.print(Text(f"only in {side}: {run}"))
    what = f"{len(diff.frame)} scalars"
    if diff.kind == "sweep":
        matched = len(diff.frame.drop_duplicates(diff.keys)) if len(diff.frame) else 0
        what += f" in {matched} matched runs"
        if diff.only_a or diff.only_b:
            what += f", {len(diff.only_a) + len(diff.only_b)} unmatched runs"
    verdict = "equal" if diff.equal else "different"
    console.print(
        Text(f"{what}: {len(diff.differences)} differ (rtol {rtol:g}); {verdict}")
    )
    return 0 if diff.equal else EXIT_FAILURE


def _compare_number(value: float, digits: int = 10) -> str:
    if value != value:
        return "–"
    return f"{value:.{digits}g}"


@cli.command(short_help="Reproduce a published study: the paper's numbers beside ours.")
@click.argument("name", required=False, metavar="NAME")
@click.option("--list", "list_", is_flag=True, help="List the bundled studies and exit.")
@click.option(
    "--quick",
    is_flag=True,
    help="Fewer replications and shorter runs (minutes instead of the paper's full count).",
)
@_JOBS_OPTION
@_DASK_OPTION
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Output directory. Default: results/reproduce/NAME (NAME-quick with --quick). "
    "An existing one is resumed.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bars or tables; print only DIR.")
def reproduce(
    name: str | None,
    list_: bool,
    quick: bool,
    jobs: int | None,
    dask: str | None,
    out: Path | None,
    quiet: bool,
) -> None:
    """Run the bundled study NAME and compare our results with the paper's.

    Every sweep of the study runs through the ordinary sweep runner (parallel,
    resumable, --dask). Then the paper's numbers are printed beside ours (mean,
    95% confidence interval, difference), and DIR receives tables/*.csv,
    figures/*.png and *.svg, and report.html: one self-contained page with the
    tables, the figures and, for each table, where we agree, where we differ
    and why.

    \b
    Examples:
      sctpsim reproduce --list
      sctpsim reproduce failover-tuning --quick
      sctpsim reproduce cc-new-stage --jobs 8 --out results/cc
    """
    from rich.console import Console
    from rich.table import Table

    from sctpsim.reproduce import StudyError, list_studies, load_study, run_study
    from sctpsim.summary import summary_console

    if list_:
        if name is not None:
            _fail("--list takes no study name")
        try:
            studies = list_studies()
        except StudyError as e:
            _fail(_one_line(str(e)))
        table = Table(title="Bundled studies", title_justify="left", title_style="bold")
        table.add_column("name", no_wrap=True)
        table.add_column("what it reproduces")
        table.add_column("paper")
        for st in studies:
            paper = st.paper + (f" (papers/{st.paper_id})" if st.paper_id else "")
            table.add_row(st.name, st.summary, paper)
        summary_console().print(table)
        return
    if name is None:
        _fail("missing study NAME (see 'sctpsim reproduce --list')")
    if out is not None:
        _check_out_dir(out)
    with _runner_errors():
        try:
            study = load_study(name)
            outcome = run_study(
                study,
                out,
                quick=quick,
                jobs=jobs,
                dask=dask,
                progress=False if quiet else Console(stderr=True),
            )
        except StudyError as e:
            _fail(_one_line(str(e)))
    if quiet:
        click.echo(str(outcome.out))
    else:
        from sctpsim.report import print_comparisons

        console = summary_console()
        console.print(f"[bold]{study.title}[/bold]  ({study.paper})")
        console.print()
        print_comparisons(console, outcome.comparisons)
        click.echo(f"tables: {outcome.out / 'tables'}")
        click.echo(f"figures: {outcome.out / 'figures'}")
        click.echo(f"report: {outcome.report}")
    if outcome.failed_runs:
        _fail(
            f"{outcome.failed_runs} runs failed; the report uses the others. Rerun the same "
            "command to retry them",
            EXIT_FAILURE,
        )


# --------------------------------------------------------------------- main


#: What click (8.2 and later) raises for a group called without a command: its message is
#: the group's help. Older versions print the help themselves and exit with status 0.
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _usage_hint(error: click.UsageError) -> str:
    ctx = error.ctx
    return f" (see '{ctx.command_path} --help')" if ctx is not None else ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit status (the ``sctpsim`` console script)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = cli.main(args=args, prog_name="sctpsim", standalone_mode=False)
    except CliError as e:
        click.echo(f"error: {_one_line(str(e))}", err=True)
        return e.code
    except click.UsageError as e:
        if isinstance(e, _NO_ARGS_IS_HELP):
            e.show()  # the help as click prints it, on stderr
            return EXIT_USAGE
        click.echo(f"error: {_one_line(e.format_message())}{_usage_hint(e)}", err=True)
        return EXIT_USAGE
    except click.ClickException as e:
        click.echo(f"error: {_one_line(e.format_message())}", err=True)
        return e.exit_code
    except (click.Abort, KeyboardInterrupt):
        # click turns Ctrl-C into Abort; staging directories are already cleaned up
        # by the context managers that were unwound on the way here.
        click.echo("error: interrupted", err=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Whoever read the output stopped early (`sctpsim run ... | head -1`): the work is
        # done, what was not read is no failure. Output goes nowhere from here on, so that
        # the interpreter's last flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    # With standalone_mode=False, --help / --version return their exit code (0);
    # a command returns None.
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


# Real mode's commands live in their own module (registered last: it uses this module's
# error helpers).
from sctpsim.realcli import real as _real  # noqa: E402

cli.add_command(_real)
