"""End-to-end tests of the ``sctpsim`` command line with the real simulator core.

End-to-end behaviour (files written, determinism, error lines) is checked through
``python -m sctpsim`` in a subprocess, exactly as a user or CI job would see it.
Help, usage errors and failure injection call :func:`sctpsim.cli.main` in-process,
which is faster and lets a test monkeypatch the result writer.

Runs are kept short with ``--set duration=1s``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import sctpsim
from sctpsim import cli
from sctpsim.results import RESULT_FILES, RunResult

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "two-path-cbr.toml"
SHORT = ["--set", "duration=1s"]

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def seconds(value: object) -> float:
    """Parse a resolved duration such as ``"2s"`` or ``"2000ms"`` into seconds."""
    match = re.fullmatch(r"\s*([0-9_.]+)\s*([a-zµ]+)\s*", str(value))
    assert match, f"not a duration: {value!r}"
    return float(match.group(1).replace("_", "")) * _UNITS[match.group(2)]


def sctpsim_cmd(
    *args: str | Path, cwd: Path, columns: int | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m sctpsim ARGS`` in ``cwd``, optionally as if on a ``columns``-wide terminal."""
    env = None
    if columns is not None:
        env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "sctpsim", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_one_error_line(stderr: str) -> str:
    """The CLI contract for expected failures: one ``error:`` line, no traceback."""
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error:"), stderr
    return lines[0]


def scenario_variant(tmp_path: Path, top_level_line: str, name: str = "bad.toml") -> Path:
    """Copy the example with ``top_level_line`` set among its top-level keys.

    A top-level key of the same name is replaced (it only looks before the first
    table header, so keys inside tables are left alone); otherwise the line is
    added before the first table.
    """
    text = EXAMPLE.read_text(encoding="utf-8")
    header = re.search(r"^\s*\[", text, flags=re.MULTILINE)
    head, tail = (text[: header.start()], text[header.start() :]) if header else (text, "")
    key = top_level_line.split("=", 1)[0].strip()
    pattern = re.compile(rf"^{re.escape(key)}\s*=.*$", flags=re.MULTILINE)
    if pattern.search(head):
        head = pattern.sub(top_level_line, head, count=1)
    else:
        head = head + "\n" + top_level_line + "\n"
    path = tmp_path / name
    path.write_text(head + tail, encoding="utf-8")
    return path


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def no_leftovers(parent: Path) -> bool:
    """No staging (``.NAME.partial-PID``) or swap directory was left behind."""
    return not [p for p in parent.iterdir() if ".partial-" in p.name or ".old-" in p.name]


# ----------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def default_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One run with seed 7 into the default output directory (results/<name>)."""
    cwd = tmp_path_factory.mktemp("default-run")
    proc = sctpsim_cmd("run", EXAMPLE, "--seed", "7", *SHORT, cwd=cwd)
    return cwd, proc


def test_run_writes_result_directory(
    default_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    cwd, proc = default_run
    assert proc.returncode == 0, proc.stderr
    out = cwd / "results" / "two-path-cbr"
    names = {p.name for p in out.iterdir()}
    assert set(RESULT_FILES) <= names
    pcaps = sorted(out.glob("*.pcap"))
    assert pcaps, f"no capture in {names}"
    assert all(p.stat().st_size >= 24 for p in pcaps)  # at least the pcap header
    # The summary and the output directory are printed.
    assert "Flows" in proc.stdout
    assert "two-path-cbr" in proc.stdout.splitlines()[0]
    assert proc.stdout.rstrip().splitlines()[-1].endswith(str(Path("results") / "two-path-cbr"))
    assert no_leftovers(out.parent)


def test_run_records_seed_and_override(
    default_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    cwd, proc = default_run
    assert proc.returncode == 0, proc.stderr
    out = cwd / "results" / "two-path-cbr"
    resolved = tomllib.loads((out / "scenario.toml").read_text(encoding="utf-8"))
    assert resolved["name"] == "two-path-cbr"
    assert resolved["seed"] == 7
    assert seconds(resolved["duration"]) == pytest.approx(1.0)
    scalars = (out / "scalars.csv").read_text(encoding="utf-8")
    assert scalars.startswith("kind,entity,metric,value,unit\n")
    assert "\nflow," in scalars and "\niface," in scalars


def test_same_seed_gives_byte_identical_files(
    default_run: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    cwd, proc = default_run
    assert proc.returncode == 0, proc.stderr
    again = sctpsim_cmd("run", EXAMPLE, "--seed", "7", *SHORT, "--out", "again", "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    first = files_of(cwd / "results" / "two-path-cbr")
    second = files_of(tmp_path / "again")
    assert first.keys() == second.keys()
    for name in first:
        assert first[name] == second[name], f"{name} differs between identical runs"


def test_different_seed_runs(tmp_path: Path) -> None:
    proc = sctpsim_cmd(
        "run", EXAMPLE, "--seed", "8", *SHORT, "--out", "s8", "--quiet", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "s8"  # --quiet prints only the directory
    resolved = tomllib.loads((tmp_path / "s8" / "scenario.toml").read_text(encoding="utf-8"))
    assert resolved["seed"] == 8


def test_rerun_replaces_previous_result(tmp_path: Path) -> None:
    for seed in ("1", "2"):
        proc = sctpsim_cmd(
            "run", EXAMPLE, "--seed", seed, *SHORT, "--out", "out", "-q", cwd=tmp_path
        )
        assert proc.returncode == 0, proc.stderr
    resolved = tomllib.loads((tmp_path / "out" / "scenario.toml").read_text(encoding="utf-8"))
    assert resolved["seed"] == 2
    assert no_leftovers(tmp_path)


def test_set_duration_changes_resolved_scenario(tmp_path: Path) -> None:
    durations = []
    for value in ("2s", "3s"):
        proc = sctpsim_cmd("check", EXAMPLE, "--set", f"duration={value}", "--print", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        durations.append(seconds(tomllib.loads(proc.stdout)["duration"]))
    assert durations == [pytest.approx(2.0), pytest.approx(3.0)]


# ---------------------------------------------------------------------- check


def test_check_ok(tmp_path: Path) -> None:
    proc = sctpsim_cmd("check", EXAMPLE, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{EXAMPLE}: ok"
    assert list(tmp_path.iterdir()) == []  # check writes nothing


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize("command", ["run", "check"])
def test_invalid_duration_is_one_error_line(tmp_path: Path, command: str) -> None:
    bad = scenario_variant(tmp_path, 'duration = "30 sm"')
    proc = (
        sctpsim_cmd(command, bad, "--out", "out", cwd=tmp_path)
        if command == "run"
        else (sctpsim_cmd(command, bad, cwd=tmp_path))
    )
    assert proc.returncode == 2
    line = assert_one_error_line(proc.stderr)
    assert line.startswith(f"error: {bad}: ")
    assert "duration" in line and "30 sm" in line
    # Nothing is written when validation fails.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_unknown_key_is_rejected(tmp_path: Path) -> None:
    bad = scenario_variant(tmp_path, 'durration = "1s"', name="typo.toml")
    proc = sctpsim_cmd("run", bad, cwd=tmp_path)
    assert proc.returncode == 2
    assert "durration" in assert_one_error_line(proc.stderr)
    assert not (tmp_path / "results").exists()


def test_unknown_override_key_is_rejected(tmp_path: Path) -> None:
    proc = sctpsim_cmd("check", EXAMPLE, "--set", "durration=1s", cwd=tmp_path)
    assert proc.returncode == 2
    assert "durration" in assert_one_error_line(proc.stderr)


def test_toml_syntax_error(tmp_path: Path) -> None:
    bad = tmp_path / "syntax.toml"
    bad.write_text('name = "x"\nduration = \n', encoding="utf-8")
    proc = sctpsim_cmd("check", bad, cwd=tmp_path)
    assert proc.returncode == 2
    assert assert_one_error_line(proc.stderr).startswith(f"error: {bad}: ")


def test_missing_file(tmp_path: Path) -> None:
    proc = sctpsim_cmd("run", tmp_path / "nope.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "nope.toml" in assert_one_error_line(proc.stderr)
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["run", str(EXAMPLE), "--set", "duration"],  # --set without "="
        ["run", str(EXAMPLE), "--set", "=1s"],
        ["run", str(EXAMPLE), "--bogus"],
        ["run", str(EXAMPLE), "--seed", "minus-one"],
        ["run"],  # missing FILE
        ["frobnicate"],  # unknown command
        ["check", str(EXAMPLE), "--set"],  # option without value
        ["sweep", str(EXAMPLE), "--dask", " "],  # no scheduler address
        ["reproduce", "failover-tuning", "--dask", ""],
    ],
)
def test_usage_errors_are_one_error_line(
    args: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(args) == 2
    assert_one_error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []


def test_usage_error_via_subprocess(tmp_path: Path) -> None:
    proc = sctpsim_cmd("run", EXAMPLE, "--set", "duration", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--set" in assert_one_error_line(proc.stderr)


@pytest.mark.parametrize("command", ["run", "check"])
def test_set_value_that_is_not_utf8_is_one_error_line(tmp_path: Path, command: str) -> None:
    # A byte that is not UTF-8 reaches Python as a lone surrogate, which the core cannot take.
    proc = sctpsim_cmd(command, EXAMPLE, "--set", os.fsdecode(b"name=\xff"), cwd=tmp_path)
    assert proc.returncode == 2
    line = assert_one_error_line(proc.stderr)
    assert "'name=\\xff' is not UTF-8 text" in line and "--set" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failed_write_leaves_no_output_directory(
    exc: BaseException,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def failing_write(self: RunResult, directory: Path) -> Path:
        # Fail at the last file, after the core wrote the others, like a full disk would.
        (Path(directory) / "scenario.toml").write_text(self.scenario, encoding="utf-8")
        raise exc

    monkeypatch.setattr(RunResult, "write_scenario", failing_write)
    out = tmp_path / "out"
    rc = cli.main(["run", str(EXAMPLE), *SHORT, "--out", str(out)])
    assert rc == (130 if isinstance(exc, KeyboardInterrupt) else 1)
    assert_one_error_line(capsys.readouterr().err)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # the staging directory is gone too


def test_refuses_to_replace_unrelated_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    assert cli.main(["run", str(EXAMPLE), *SHORT, "--out", str(tmp_path)]) == 2
    assert "refusing" in assert_one_error_line(capsys.readouterr().err)
    assert (tmp_path / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize("out", ["afile/sub", "afile/x/sub"])
@pytest.mark.parametrize(
    "command",
    [
        ["run", str(EXAMPLE), *SHORT],
        ["sweep", str(EXAMPLE.parent / "sweeps" / "two-path-delay.toml")],
        ["reproduce", "failover-tuning", "--quick"],
    ],
    ids=["run", "sweep", "reproduce"],
)
def test_out_under_a_file_is_one_error_line(
    tmp_path: Path,
    out: str,
    command: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("keep me")
    assert cli.main([*command, "--out", out]) == 2
    assert assert_one_error_line(capsys.readouterr().err) == (
        f"error: {out}: cannot create it: afile is not a directory"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


# ---------------------------------------------------------------- help, params


def test_version(tmp_path: Path) -> None:
    proc = sctpsim_cmd("--version", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"sctpsim {sctpsim.__version__}"


@pytest.mark.parametrize("args", [[], ["run"], ["check"], ["params"]])
def test_help(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([*args, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: sctpsim")
    assert "Examples:" in out


@pytest.mark.parametrize("args", [[], ["real"]])
def test_no_command_prints_the_help(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # The group's help as click prints it (multi-line, on stderr), not one "error:" line.
    assert cli.main(args) in (0, 2)
    captured = capsys.readouterr()
    text = captured.err or captured.out
    assert text.startswith(f"Usage: {' '.join(['sctpsim', *args])} [OPTIONS] COMMAND")
    assert "\nCommands:\n" in text and not text.startswith("error:")


def test_params_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["params"]) == 0
    assert "duration" in capsys.readouterr().out


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_params_never_cuts_a_word(columns: int, tmp_path: Path) -> None:
    # A table wide enough to read, or one block per key on a narrow terminal; either way
    # every key and every word of every description is there, folded rather than cut.
    proc = sctpsim_cmd("params", cwd=tmp_path, columns=columns)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    assert max(map(len, proc.stdout.splitlines())) <= columns
    if columns >= cli.PARAMS_TABLE_MIN_WIDTH:
        # The description column, read down the table.
        cells = [line.split("│") for line in proc.stdout.splitlines() if line.startswith("│")]
        flat = "".join(c[1] + c[5] for c in cells if len(c) == 7)
    else:
        flat = proc.stdout
    flat = re.sub(r"\s+", "", flat)
    for p in sctpsim._core.params():
        assert re.sub(r"\s+", "", p["key"]) in flat
        assert re.sub(r"\s+", "", p.get("doc") or "") in flat, p["key"]


def test_params_markdown(tmp_path: Path) -> None:
    proc = sctpsim_cmd("params", "--markdown", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = proc.stdout
    assert page.startswith("# ")
    assert "`duration`" in page
    assert "| Key | Type | Default | Unit | Description |" in page
    assert '"30ms"' in page and '"1Gbps"' in page and '"64KiB"' in page
    # Every key the core knows is documented.
    for p in sctpsim._core.params():
        assert f"`{p['key']}`" in page


def test_tcp_example_summary_shows_senders_and_groups(tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "examples" / "tcp-dumbbell.toml"
    proc = sctpsim_cmd("run", example, "--out", tmp_path / "out", "--set", "duration=5s", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "TCP senders" in proc.stdout and "Groups (TCP flows)" in proc.stdout
    scalars = (tmp_path / "out" / "scalars.csv").read_text()
    assert "group,cross,jain_index," in scalars
    assert "tcp,ftp-1,retransmissions," in scalars


def test_sctp_example_summary_shows_failover(tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "examples" / "failover.toml"
    proc = sctpsim_cmd("run", example, "--out", tmp_path / "out", cwd=tmp_path, columns=80)
    assert proc.returncode == 0, proc.stderr
    for title in ("SCTP receivers", "SCTP senders", "SCTP failover", "SCTP paths"):
        assert title in proc.stdout
    # A narrow terminal never gets numbers cut to "…"; the SCTP tables fit 80 columns.
    assert "…" not in proc.stdout
    sctp_part = proc.stdout[proc.stdout.index("SCTP receivers") : proc.stdout.index("Interfaces")]
    assert max(map(len, sctp_part.splitlines())) <= 80
    failover = next(line for line in proc.stdout.splitlines() if re.match(r"│ upload +│ +10\.000 ", line))
    # The first retransmission on the alternate path one RTO after the break (plus the
    # time to the next send); failover after 1+2+4+8+16+32 s of backed-off RTOs; new data on
    # the alternate once the last timeout's one packet of retransmissions (RFC 9260 §6.3.3
    # E3) is acknowledged, after the peer's 200 ms SACK delay and a round trip.
    assert re.search(r"│ +- │ +1\.004 │ +63\.247 │ +63\.004 │ +- │$", failover), failover
    assert re.search(r"│ upload/path0 +│ inactive", proc.stdout)


def test_core_failing_to_write_results_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The core writes scalars.csv and the Parquet tables; its OSError is reported like any
    # write failure, and nothing is left behind.
    real_run = cli._core.run

    def run_then_fail(*args: object) -> object:
        real_run(*args)
        raise PermissionError(13, "Permission denied", str(args[-1]) + "/scalars.csv")

    monkeypatch.setattr(cli._core, "run", run_then_fail)
    out = tmp_path / "out"
    assert cli.main(["run", str(EXAMPLE), *SHORT, "--out", str(out)]) == 1
    line = assert_one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: writing results to {out}") and "Permission denied" in line
    assert list(tmp_path.iterdir()) == []
