"""Sweeps: expansion and seeds, the results store (resume, atomic writes, SIGKILL),
determinism across backends, failed runs, statistics, plots and the CLI contract.

Runs are short (a few simulated seconds of the two-path example, milliseconds each);
the SIGKILL test uses longer runs so that it can kill the sweep midway.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import sctpsim
from sctpsim import cli
from sctpsim.stats import confidence_interval, summarize
from sctpsim.sweep import Sweep, SweepError, derive_seed

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two-path-cbr.toml"
INVALID = sorted((ROOT / "tests" / "invalid-sweeps").glob("*.toml"))
EXAMPLE_SWEEPS = sorted((ROOT / "examples" / "sweeps").glob("*.toml"))

SWEEP_TEXT = f"""
name = "small"
scenario = "{EXAMPLE.as_posix()}"
seed = 7
replications = 3
metrics = ["flow/path2/goodput", "flow/*/loss_rate"]

[set]
duration = "1s"

[grid]
"links[3].loss.p" = [0.01, 0.05]

[[zip]]
"links[3].delay" = ["5ms", "20ms"]
"apps[3].rate" = ["2Mbps", "3Mbps"]
"""


def write_sweep(tmp_path: Path, text: str = SWEEP_TEXT, name: str = "small.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def sctpsim_cmd(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sctpsim", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def run_files(out: Path) -> dict[str, int]:
    """Per-run files and their modification times (to see which were rewritten)."""
    return {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}


# ----------------------------------------------------------------- expansion


def test_expansion_order_zip_and_replications(tmp_path: Path) -> None:
    sweep = sctpsim.load_sweep(write_sweep(tmp_path))
    assert sweep.parameters == ["links[3].loss.p", "links[3].delay", "apps[3].rate"]
    points = sweep.points()
    assert points == [
        {"links[3].loss.p": 0.01, "links[3].delay": "5ms", "apps[3].rate": "2Mbps"},
        {"links[3].loss.p": 0.01, "links[3].delay": "20ms", "apps[3].rate": "3Mbps"},
        {"links[3].loss.p": 0.05, "links[3].delay": "5ms", "apps[3].rate": "2Mbps"},
        {"links[3].loss.p": 0.05, "links[3].delay": "20ms", "apps[3].rate": "3Mbps"},
    ]
    runs = sweep.runs()
    assert len(runs) == 12
    assert [(r.point, r.replication) for r in runs[:4]] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert len({r.seed for r in runs}) == 12
    assert len({r.run_id for r in runs}) == 12
    assert runs[0].overrides == (
        'duration="1s"',
        "links[3].loss.p=0.01",
        'links[3].delay="5ms"',
        'apps[3].rate="2Mbps"',
    )


def test_seeds_are_stable_and_independent_of_other_runs(tmp_path: Path) -> None:
    # A pinned value: seeds must never change between versions or machines.
    assert derive_seed(1, {"a": 1}, 0) == derive_seed(1, {"a": 1}, 0) == 23317855064320637
    assert derive_seed(1, {"a": 1, "b": "x"}, 2) == derive_seed(1, {"b": "x", "a": 1}, 2)
    assert derive_seed(2, {"a": 1}, 0) != derive_seed(1, {"a": 1}, 0)
    base = sctpsim.load_sweep(write_sweep(tmp_path))
    more = sctpsim.load_sweep(
        write_sweep(tmp_path, SWEEP_TEXT.replace("[0.01, 0.05]", "[0.01, 0.02, 0.05]"), "more.toml")
    )
    seeds = {(tuple(r.parameters.items()), r.replication): (r.seed, r.run_id) for r in base.runs()}
    for r in more.runs():
        key = (tuple(r.parameters.items()), r.replication)
        if key in seeds:  # the runs both sweeps share are the same runs
            assert seeds[key] == (r.seed, r.run_id)


def test_run_identity_follows_resolved_inputs(tmp_path: Path) -> None:
    ids = [r.run_id for r in sctpsim.load_sweep(write_sweep(tmp_path)).runs()]
    # Comments, key order and metrics do not change what a run computes...
    reordered = SWEEP_TEXT.replace(
        'metrics = ["flow/path2/goodput", "flow/*/loss_rate"]',
        'metrics = ["flow/path2/goodput"]  # fewer',
    )
    assert [
        r.run_id for r in sctpsim.load_sweep(write_sweep(tmp_path, reordered, "b.toml")).runs()
    ] == ids
    # ...but a fixed override does (same seeds, different inputs).
    longer = SWEEP_TEXT.replace('duration = "1s"', 'duration = "2s"')
    other = sctpsim.load_sweep(write_sweep(tmp_path, longer, "c.toml")).runs()
    assert [r.seed for r in other] == [
        r.seed for r in sctpsim.load_sweep(write_sweep(tmp_path)).runs()
    ]
    assert not set(ids) & {r.run_id for r in other}
    # ...and so does the base scenario's content.
    base = tmp_path / "base.toml"
    base.write_text(EXAMPLE.read_text().replace('rate = "50Mbps"', 'rate = "40Mbps"', 1))
    edited = SWEEP_TEXT.replace(EXAMPLE.as_posix(), "base.toml")
    assert not set(ids) & {
        r.run_id for r in sctpsim.load_sweep(write_sweep(tmp_path, edited, "d.toml")).runs()
    }


def test_a_resumed_sweep_reruns_every_run_when_the_engine_build_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The crate version does not change with the engine; the build id (a hash of the Rust
    # sources the core was built from) does, and it is part of every run's identity.
    import sctpsim.sweep as sweep_module

    build = sweep_module._core.__build_id__
    assert len(build) == 20 and int(build, 16) >= 0
    text = SWEEP_TEXT.replace("replications = 3", "replications = 1")
    sweep, out = write_sweep(tmp_path, text), tmp_path / "out"
    args = ["sweep", str(sweep), "--out", str(out), "-j", "1"]
    assert cli.main(args) == 0
    assert "(4 run now, 0 reused)" in capsys.readouterr().out
    assert cli.main(args) == 0
    assert "(0 run now, 4 reused)" in capsys.readouterr().out
    ids = sorted(run_files(out))
    monkeypatch.setattr(sweep_module._core, "__build_id__", "0" * 20)
    assert cli.main(args) == 0
    assert "(4 run now, 0 reused)" in capsys.readouterr().out
    assert not set(ids) & {r.run_id + ".json" for r in Sweep.from_file(sweep).runs()}

def test_sweep_from_dict_with_a_scenario_object() -> None:
    base = sctpsim.load_scenario(EXAMPLE, {"duration": "1s"})
    sweep = Sweep.from_dict(
        {
            "scenario": base,
            "grid": {"links[3].delay": ["5ms", "10ms"]},
            "metrics": ["flow/path2/goodput"],
        }
    )
    assert sweep.name == "two-path-cbr" and len(sweep.runs()) == 2
    with pytest.raises(SweepError) as info:
        Sweep.from_dict(
            {"scenario": base, "grid": {"links[3].delay": ["5 ms", "1 0ms"]}, "metrics": ["a/b/c"]}
        )
    assert info.value.key == 'grid."links[3].delay"[1]'
    # Values that are valid only together (start and stop both later than the base
    # scenario's stop) are accepted; the combinations decide.
    late = Sweep.from_dict(
        {
            "scenario": base,
            "grid": {"apps[4].start": ["10s", "11s"], "apps[4].stop": ["10.5s", "12s"]},
            "metrics": ["a/b/c"],
        }
    )
    assert [r.error is None for r in late.runs()] == [True, True, False, True]


def test_sweep_from_dict_takes_numpy_values_as_python_numbers() -> None:
    # numpy scalars (np.linspace, np.arange) are the numbers they stand for: the same
    # runs, seeds and identities as the plain values, not "np.float64(0.0)" strings.
    base = sctpsim.load_scenario(EXAMPLE, {"duration": "1s"})

    def runs(loss: list[object], limit: list[object]) -> list[tuple[object, ...]]:
        sweep = Sweep.from_dict(
            {
                "scenario": base,
                "grid": {"links[3].loss.p": loss, "links[1].queue.limit": limit},
                "metrics": ["flow/path2/goodput"],
            }
        )
        return [(r.parameters, r.seed, r.run_id, r.error) for r in sweep.runs()]

    numpy_runs = runs(list(np.linspace(0, 0.05, 3)), list(np.arange(10, 40, 10)))
    assert numpy_runs == runs([0.0, 0.025, 0.05], [10, 20, 30])
    assert all(error is None for *_, error in numpy_runs)
    assert [type(v) for v in numpy_runs[0][0].values()] == [float, int]


# ------------------------------------------------------------- bad sweep files


def test_sweep_corpus_is_large_enough() -> None:
    assert len(INVALID) >= 25


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_sweep_is_rejected_with_its_message(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = path.read_text().splitlines()[0].removeprefix("# expect: ")
    out = tmp_path / "out"
    rel = os.path.relpath(path)
    assert cli.main(["sweep", rel, "--out", str(out), "--jobs", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: {rel}: {expected}\n"
    assert captured.out == ""
    assert not out.exists()


def test_invalid_sweep_via_subprocess_has_no_traceback(tmp_path: Path) -> None:
    path = INVALID[0]
    proc = sctpsim_cmd("sweep", path, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"error: {path}: ")
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------- determinism and resume


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small sweep run once in this process (--jobs 1)."""
    tmp = tmp_path_factory.mktemp("reference")
    sweep = write_sweep(tmp)
    assert cli.main(["sweep", str(sweep), "--out", str(tmp / "out"), "--jobs", "1", "-q"]) == 0
    return tmp / "out"


def test_store_layout_and_columns(reference: Path) -> None:
    assert {p.name for p in reference.iterdir()} >= {
        "runs",
        "runs.parquet",
        "summary.csv",
        "sweep.toml",
    }
    assert len(list((reference / "runs").glob("*.json"))) == 12
    df = sctpsim.load_runs(reference)
    assert list(df.columns[:9]) == [
        "run",
        "run_id",
        "links[3].loss.p",
        "links[3].delay",
        "apps[3].rate",
        "replication",
        "seed",
        "status",
        "error",
    ]
    assert list(df["run"]) == list(range(12))
    assert df["status"].eq("ok").all() and df["error"].isna().all()
    assert df.attrs["units"]["flow/path2/goodput"] == "bit/s"
    assert df.attrs["parameters"] == ["links[3].loss.p", "links[3].delay", "apps[3].rate"]
    schema = pq.read_schema(reference / "runs.parquet")
    assert schema.field("flow/path2/delay_mean").metadata == {b"unit": b"s"}
    assert str(df["links[3].loss.p"].dtype) == "float64"
    # Each run's scalars are exactly what a single run of the same inputs gives.
    run = sctpsim.load_sweep(reference / "sweep.toml").runs()[4]
    single = sctpsim.run(sctpsim.Scenario(EXAMPLE.read_text(), run.overrides), seed=run.seed)
    row = df.iloc[4]
    for name, value in single.scalars.items():
        assert row[name] == value or (math.isnan(row[name]) and math.isnan(value))


def test_jobs_2_gives_identical_bytes(reference: Path, tmp_path: Path) -> None:
    proc = sctpsim_cmd("sweep", write_sweep(tmp_path), "--out", tmp_path / "out", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    for name in ("runs.parquet", "summary.csv"):
        assert (tmp_path / "out" / name).read_bytes() == (reference / name).read_bytes(), name
    # The progress bar (stderr) reports completed/total and failures.
    assert "12/12" in proc.stderr and "0 failed" in proc.stderr
    assert "flow/path2/goodput [bit/s]" in proc.stdout
    assert proc.stdout.rstrip().endswith(f"results: {tmp_path / 'out'}")


def need_distributed() -> None:
    """Dask is part of the test extra; CI must not skip the cluster tests silently."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("dask.distributed is required in CI (pip install '.[test]')")
        pytest.skip("dask.distributed not installed")


def test_dask_local_gives_identical_bytes(reference: Path, tmp_path: Path) -> None:
    need_distributed()
    proc = sctpsim_cmd(
        "sweep",
        write_sweep(tmp_path),
        "--out",
        tmp_path / "out",
        "--dask",
        "local",
        "--jobs",
        "2",
        "-q",
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("runs.parquet", "summary.csv"):
        assert (tmp_path / "out" / name).read_bytes() == (reference / name).read_bytes(), name


def test_rerun_skips_finished_runs_and_changed_inputs_rerun(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    out = tmp_path / "out"
    shutil.copytree(reference, out)
    before = run_files(out)
    sweep = write_sweep(tmp_path)
    assert cli.main(["sweep", str(sweep), "--out", str(out), "--jobs", "1"]) == 0
    assert "(0 run now, 12 reused)" in capsys.readouterr().out
    assert run_files(out) == before
    assert (out / "runs.parquet").read_bytes() == (reference / "runs.parquet").read_bytes()
    # A changed fixed override changes every run's inputs: nothing is reused, and
    # the old runs stay in runs/ but not in the results.
    write_sweep(tmp_path, SWEEP_TEXT.replace('duration = "1s"', 'duration = "1.5s"'))
    assert cli.main(["sweep", str(sweep), "--out", str(out), "--jobs", "1"]) == 0
    assert "(12 run now, 0 reused)" in capsys.readouterr().out
    assert len(run_files(out)) == 24
    df = sctpsim.load_runs(out)
    assert len(df) == 12 and not set(df["run_id"]) & {n.removesuffix(".json") for n in before}


def test_a_store_of_an_earlier_version_resumes(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run files as earlier versions wrote them (a one-row Parquet file each) are reused."""
    import json
    import shutil

    import pyarrow as pa

    out = tmp_path / "out"
    shutil.copytree(reference, out)
    for path in sorted((out / "runs").glob("*.json")):
        doc = json.loads(path.read_text())
        columns = {"run_id": pa.array([doc["run_id"]], pa.string())}
        fields = [pa.field("run_id", pa.string())]
        for name in ("status", "error"):
            columns[name] = pa.array([doc[name]], pa.string())
            fields.append(pa.field(name, pa.string()))
        for name, value in doc["scalars"].items():
            columns[name] = pa.array([value], pa.float64())
            fields.append(pa.field(name, pa.float64(), metadata={"unit": doc["units"][name]}))
        table = pa.Table.from_arrays(list(columns.values()), schema=pa.schema(fields))
        pq.write_table(table, path.with_suffix(".parquet"))
        path.unlink()
    sweep = write_sweep(tmp_path)
    assert cli.main(["sweep", str(sweep), "--out", str(out), "--jobs", "1"]) == 0
    assert "(0 run now, 12 reused)" in capsys.readouterr().out
    assert not list((out / "runs").glob("*.json"))
    assert (out / "runs.parquet").read_bytes() == (reference / "runs.parquet").read_bytes()


def test_failed_combinations_are_recorded_listed_and_retried(tmp_path: Path) -> None:
    text = f"""
scenario = "{EXAMPLE.as_posix()}"
replications = 2
metrics = ["flow/cross/goodput"]
[set]
duration = "3s"
[grid]
"apps[4].start" = ["1s", "3s"]
"apps[4].stop" = ["2.5s", "9s"]
"""
    sweep = write_sweep(tmp_path, text, "combo.toml")
    out = tmp_path / "out"
    proc = sctpsim_cmd("sweep", sweep, "--out", out, "--jobs", "2")
    assert proc.returncode == 1
    assert (
        proc.stderr.splitlines()[-1]
        == "error: 2 of 8 runs failed; rerun the same command to retry them"
    )
    assert "Failed runs (2)" in proc.stdout
    df = sctpsim.load_runs(out)
    failed = df[df["status"] == "failed"]
    assert list(failed["run"]) == [4, 5]  # start 3s, stop 2.5s
    assert (
        failed["error"].eq('invalid scenario: apps[4].stop: "2500ms" is before start ("3s")').all()
    )
    assert failed["flow/cross/goodput"].isna().all()
    summary = pd.read_csv(out / "summary.csv")
    bad = summary[(summary["apps[4].start"] == "3s") & (summary["apps[4].stop"] == "2.5s")]
    assert list(bad[["n", "failed"]].iloc[0]) == [0, 2]
    # Rerunning retries only the failed runs.
    again = sctpsim_cmd("sweep", sweep, "--out", out, "--jobs", "1")
    assert again.returncode == 1 and "(2 run now, 6 reused)" in again.stdout


def test_unknown_metric_is_reported_after_the_runs_are_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = write_sweep(
        tmp_path, SWEEP_TEXT.replace('"flow/path2/goodput"', '"flow/path2/goodptu"')
    )
    out = tmp_path / "out"
    assert cli.main(["sweep", str(sweep), "--out", str(out), "--jobs", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f'error: {sweep}: metrics[0]: "flow/path2/goodptu" matches no scalar (did you mean '
        '"flow/path2/goodput"?) (the runs are stored; rerun after fixing it)\n'
    )
    # The runs are stored; no table is left to look like a finished sweep.
    assert len(run_files(out)) == 12
    assert not (out / "runs.parquet").exists() and not (out / "summary.csv").exists()


def test_an_until_scalar_no_run_has_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without the check, every sample would silently count.
    text = SWEEP_TEXT.replace("replications = 3", "replications = 1") + (
        '[series]\nmetrics = ["iface/A/eth1/queue_packets"]\nstats = ["mean"]\n'
        'until = "flow/path2/delay_mxa"\n'
    )
    sweep = write_sweep(tmp_path, text)
    assert cli.main(["sweep", str(sweep), "--out", str(tmp_path / "out"), "-j", "1", "-q"]) == 2
    assert capsys.readouterr().err == (
        f'error: {sweep}: series.until: "flow/path2/delay_mxa" matches no scalar (did you '
        'mean "flow/path2/delay_max"?) (the runs are stored; rerun after fixing it)\n'
    )


def test_store_refuses_unrelated_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("keep")
    assert cli.main(["sweep", str(write_sweep(tmp_path)), "--out", str(tmp_path), "-j", "1"]) == 2
    assert "refusing" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "keep"


def test_sigkill_midway_then_resume_runs_everything_exactly_once(tmp_path: Path) -> None:
    # Longer runs (~0.05-0.15 s each) so the sweep can be killed while running.
    text = f"""
name = "killme"
scenario = "{EXAMPLE.as_posix()}"
replications = 4
metrics = ["flow/path2/loss_rate"]
[set]
duration = "150s"
"record.events" = []
[grid]
"links[3].loss.p" = [0.01, 0.02, 0.03]
"""
    sweep = write_sweep(tmp_path, text, "killme.toml")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sctpsim",
            "sweep",
            str(sweep),
            "--out",
            str(out),
            "--jobs",
            "2",
            "-q",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the kill takes the workers too
    )
    deadline = time.monotonic() + 120
    while (
        time.monotonic() < deadline and len(run_files(out) if (out / "runs").is_dir() else {}) < 3
    ):
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    survivors = run_files(out)
    assert 3 <= len(survivors) < 12, "the sweep should have been killed midway"
    assert not (out / "runs.parquet").exists()

    resumed = sctpsim_cmd("sweep", sweep, "--out", out, "--jobs", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert f"({12 - len(survivors)} run now, {len(survivors)} reused)" in resumed.stdout
    after = run_files(out)
    assert len(after) == 12
    assert all(after[name] == mtime for name, mtime in survivors.items())  # not rerun
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".")]  # no temp files
    df = sctpsim.load_runs(out)
    assert sorted(df["run_id"]) == sorted(n.removesuffix(".json") for n in after)
    assert df["run_id"].is_unique and df["status"].eq("ok").all()

    fresh = tmp_path / "fresh"
    proc2 = sctpsim_cmd("sweep", sweep, "--out", fresh, "--jobs", "2", "-q")
    assert proc2.returncode == 0, proc2.stderr
    assert (out / "runs.parquet").read_bytes() == (fresh / "runs.parquet").read_bytes()


# -------------------------------------------------------------- statistics


def test_confidence_interval_is_student_t() -> None:
    x = [1.0, 2.0, 4.0, 7.0]
    mean, stdev, low, high, n = confidence_interval(x)
    assert n == 4 and mean == 3.5
    assert stdev == pytest.approx(np.std(x, ddof=1))
    t = 3.182446305284263  # t(0.975, 3)
    assert high - mean == pytest.approx(t * stdev / 2.0)
    assert mean - low == pytest.approx(high - mean)
    assert confidence_interval([5.0])[:2] == (5.0, pytest.approx(math.nan, nan_ok=True))
    assert confidence_interval([math.nan, 1.0, 3.0])[4] == 2


def test_summarize_groups_by_parameters_in_run_order() -> None:
    runs = pd.DataFrame(
        {
            "p": ["b", "b", "a", "a", "a"],
            "status": ["ok", "ok", "ok", "ok", "failed"],
            "m/x/y": [1.0, 3.0, 10.0, 10.0, math.nan],
        }
    )
    s = summarize(runs, ["p"], ["m/x/y"], {"m/x/y": "s"})
    assert list(s["p"]) == ["b", "a"]
    assert list(s["n"]) == [2, 2] and list(s["failed"]) == [0, 1]
    assert list(s["mean"]) == [2.0, 10.0] and s["unit"].eq("s").all()
    assert s["ci95_low"].iloc[1] == s["ci95_high"].iloc[1] == 10.0


# ------------------------------------------------------------------- plots


def test_plot_writes_png_and_svg(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    out = tmp_path / "store"
    shutil.copytree(reference, out)
    args = [
        "plot",
        str(out),
        "--x",
        "links[3].loss.p",
        "--y",
        "flow/path2/loss_rate",
        "--hue",
        "links[3].delay",
    ]
    assert cli.main(args) == 0
    paths = [Path(p) for p in capsys.readouterr().out.split()]
    assert [p.suffix for p in paths] == [".png", ".svg"]
    assert paths[0].read_bytes().startswith(b"\x89PNG") and paths[0].parent == out / "plots"
    svg = paths[1].read_text()
    assert "<svg" in svg
    # Deterministic: the same plot twice gives the same SVG.
    assert cli.main(args) == 0
    capsys.readouterr()
    assert paths[1].read_text() == svg
    # A quantity axis, selected with --where.
    assert (
        cli.main(
            [
                "plot",
                str(out),
                "--x",
                "links[3].delay",
                "--y",
                "flow/path2/goodput",
                "--where",
                "links[3].loss.p=0.05",
                "--out",
                str(tmp_path / "g"),
            ]
        )
        == 0
    )
    assert (tmp_path / "g.png").is_file() and (tmp_path / "g.svg").is_file()
    # Two slices by default name: two files, each titled with its slice.
    for p in ("0.01", "0.05"):
        where = ["--where", f"links[3].loss.p={p}"]
        args = ["plot", str(out), "--x", "links[3].delay", "--y", "flow/path2/goodput"]
        assert cli.main([*args, *where]) == 0
    capsys.readouterr()
    slices = sorted((out / "plots").glob("flow_path2_goodput_vs_links3.delay_where_*.svg"))
    assert [f.name for f in slices] == [
        "flow_path2_goodput_vs_links3.delay_where_links3.loss.p=0.01.svg",
        "flow_path2_goodput_vs_links3.delay_where_links3.loss.p=0.05.svg",
    ]
    assert "links[3].loss.p = 0.05" in slices[1].read_text()


def test_plot_heatmap_and_several_metrics(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pages import assert_not_blank

    out = tmp_path / "store"
    shutil.copytree(reference, out)
    args = ["plot", str(out), "--x", "links[3].delay", "--hue", "links[3].loss.p", "--kind", "heatmap"]
    assert cli.main([*args, "--y", "flow/path2/goodput"]) == 0
    png, svg = (Path(p) for p in capsys.readouterr().out.split())
    assert png == out / "plots" / "flow_path2_goodput_heatmap_links3.delay_by_links3.loss.p.png"
    assert_not_blank(png.read_bytes())
    text = svg.read_text()
    # x values across (the columns), hue values down (the rows), each cell annotated
    # with the mean goodput over the three replications.
    runs = pd.read_parquet(out / "runs.parquet")
    for (loss, delay), sel in runs.groupby(["links[3].loss.p", "links[3].delay"]):
        assert f"{sel['flow/path2/goodput'].mean() / 1e6:.3g}M" in text, (loss, delay)
    for label in ("5ms", "20ms", "0.01", "0.05"):
        assert label in text
    # Two metrics: one heatmap each, in one figure.
    assert cli.main([*args, "--y", "flow/path2/goodput", "--y", "flow/path2/loss_rate"]) == 0
    png2, svg2 = (Path(p) for p in capsys.readouterr().out.split())
    assert png2.name == "flow_path2_goodput+flow_path2_loss_rate_heatmap_links3.delay_by_links3.loss.p.png"
    assert_not_blank(png2.read_bytes())
    text2 = svg2.read_text()
    assert "flow/path2/goodput [bit/s]" in text2 and "flow/path2/loss_rate [1]" in text2
    # Lines, two metrics: two panels sharing the x axis.
    line = ["plot", str(out), "--x", "links[3].delay", "--hue", "links[3].loss.p"]
    assert cli.main([*line, "--y", "flow/path2/goodput", "--y", "flow/path2/loss_rate"]) == 0
    _, svg3 = (Path(p) for p in capsys.readouterr().out.split())
    text3 = svg3.read_text()
    assert text3.count('id="axes_') == 2
    assert "flow/path2/goodput [bit/s]" in text3 and "flow/path2/loss_rate [1]" in text3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--x", "links[3].delay", "--kind", "heatmap", "--y", "flow/path2/goodput"],
            "--kind: a heatmap needs both --x (its columns) and --hue (its rows); --hue is missing",
        ),
        (
            ["--x", "links[3].delay", "--hue", "links[3].loss.p", "--y", "flow/path2/goodput",
             "--y", "flow/path2/goodput"],
            '--y: "flow/path2/goodput" is given twice',
        ),
        (
            ["--x", "links[3].delay", "--hue", "links[3].loss.p", "--y", "flow/path2/goodput",
             "--y", "flow/path2/goodptu"],
            '--y: "flow/path2/goodptu" is not a metric of this sweep (did you mean "flow/path2/goodput"?)',
        ),
        (
            ["--x", "links[3].dealy", "--y", "flow/path2/goodput"],
            '--x: "links[3].dealy" is not a parameter of this sweep',
        ),
        (
            ["--x", "links[3].delay", "--y", "flow/path2/goodptu"],
            '--y: "flow/path2/goodptu" is not a metric of this sweep (did you mean "flow/path2/goodput"?)',
        ),
        (
            ["--x", "links[3].delay", "--y", "flow/path2/goodput"],
            "--x: other parameters vary too: links[3].loss.p (0.01, 0.05)",
        ),
        (
            [
                "--x",
                "links[3].delay",
                "--y",
                "flow/path2/goodput",
                "--where",
                "links[3].loss.p=0.5",
            ],
            '--where: links[3].loss.p is never "0.5" (values: 0.01, 0.05)',
        ),
    ],
)
def test_plot_errors_are_one_line(
    reference: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["plot", str(reference), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {reference}: {message}") and err.count("\n") == 1


def test_plot_without_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["plot", str(tmp_path), "--x", "a", "--y", "b/c/d"]) == 2
    assert "runs.parquet: no such file" in capsys.readouterr().err


@pytest.fixture(scope="module")
def unsorted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep listing its values out of order (two zipped keys), one run per point."""
    tmp = tmp_path_factory.mktemp("unsorted")
    sweep = write_sweep(
        tmp,
        f"""
name = "unsorted"
scenario = "{EXAMPLE.as_posix()}"
metrics = ["flow/path1/goodput"]
[set]
duration = "1s"
[[zip]]
"links[1].queue.limit" = [50, 5, 100, 20]
"links[1].delay" = ["20ms", "5ms", "40ms", "10ms"]
""",
    )
    assert cli.main(["sweep", str(sweep), "--out", str(tmp / "out"), "--jobs", "1", "-q"]) == 0
    return tmp / "out"


def _plotted(monkeypatch: pytest.MonkeyPatch, directory: Path, *args: str) -> Any:
    """The figure ``sctpsim plot DIR ARGS...`` draws."""
    import sctpsim.plot

    figures = []
    save = sctpsim.plot.save_figure

    def keep(fig: Any, stem: Path) -> tuple[Path, Path]:
        figures.append(fig)
        return save(fig, stem)

    monkeypatch.setattr(sctpsim.plot, "save_figure", keep)
    assert cli.main(["plot", str(directory), *args, "--out", str(directory / "p")]) == 0
    (fig,) = figures
    return fig


@pytest.mark.parametrize(
    ("x", "positions"),
    [("links[1].queue.limit", [5, 20, 50, 100]), ("links[1].delay", [0.005, 0.01, 0.02, 0.04])],
)
def test_plot_joins_the_points_in_x_order(
    unsorted: Path, x: str, positions: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    fig = _plotted(monkeypatch, unsorted, "--x", x, "--y", "flow/path1/goodput")
    (bars,) = fig.axes[0].containers  # ErrorbarContainer: the line, caps, bars
    assert list(bars.lines[0].get_xdata()) == positions


def test_plot_draws_no_error_bar_without_a_confidence_interval(
    unsorted: Path, reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One run per point: no interval, so no bar (not one of zero length), and a title
    # that says so.
    fig = _plotted(monkeypatch, unsorted, "--x", "links[1].delay", "--y", "flow/path1/goodput")
    ax = fig.axes[0]
    (bars,) = ax.containers
    assert all(len(segment) == 0 for segment in bars.lines[2][0].get_segments())
    assert all(np.isnan(np.asarray(cap.get_ydata(), dtype=float)).all() for cap in bars.lines[1])
    assert ax.get_title() == "unsorted: mean (one run per point: no confidence interval)"
    # Three runs per point: a bar on each.
    fig = _plotted(
        monkeypatch,
        reference,
        *("--x", "links[3].delay", "--y", "flow/path2/goodput", "--hue", "links[3].loss.p"),
    )
    ax = fig.axes[0]
    assert ax.get_title() == "small: mean and 95% confidence interval"
    for bars in ax.containers:
        assert [len(segment) for segment in bars.lines[2][0].get_segments()] == [2, 2]


# ----------------------------------------------------------------- examples


@pytest.mark.parametrize("path", EXAMPLE_SWEEPS, ids=[p.stem for p in EXAMPLE_SWEEPS])
def test_example_sweeps_run(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "1", "-q"]) == 0


def test_failover_notebook_example_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "failover_sweep.py"),
            "--out",
            str(tmp_path / "out"),
            "--replications",
            "2",
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "runs.parquet").is_file()
    assert sorted(p.suffix for p in (tmp_path / "out" / "plots").iterdir()) == [".png", ".svg"]


# ------------------------------------------------------------ a real Dask cluster


def test_sweep_on_real_dask_scheduler_and_worker_processes(reference: Path, tmp_path: Path) -> None:
    """A scheduler and two worker processes on loopback, as on a cluster; same bytes."""
    need_distributed()
    scheduler_file = tmp_path / "scheduler.json"
    common = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    scheduler = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dask",
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(scheduler_file),
        ],
        **common,  # type: ignore[call-overload]
    )
    worker: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            assert scheduler.poll() is None, "the Dask scheduler exited"
            time.sleep(0.05)
        import json

        time.sleep(0.1)  # the file is written in one go, but be safe about reading it early
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dask",
                "worker",
                "--scheduler-file",
                str(scheduler_file),
                "--nworkers",
                "2",
                "--nthreads",
                "1",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
                "--memory-limit",
                "0",
            ],
            **common,  # type: ignore[call-overload]
        )
        from dask.distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        proc = sctpsim_cmd(
            "sweep", write_sweep(tmp_path), "--out", tmp_path / "out", "--dask", address
        )
        assert proc.returncode == 0, proc.stderr
        assert "12/12" in proc.stderr
        for name in ("runs.parquet", "summary.csv"):
            assert (tmp_path / "out" / name).read_bytes() == (reference / name).read_bytes(), name
    finally:
        for p in (worker, scheduler):
            if p is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
        for p in (worker, scheduler):
            if p is not None:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()


def test_unreachable_dask_scheduler_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    need_distributed()
    import socket

    from sctpsim import runner

    monkeypatch.setattr(runner, "DASK_CONNECT_TIMEOUT", "1s")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    rc = cli.main(
        [
            "sweep",
            str(write_sweep(tmp_path)),
            "--out",
            str(tmp_path / "out"),
            "--dask",
            address,
            "-q",
        ]
    )
    assert rc == 1
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"error: cannot connect to the Dask scheduler at {address}: ")


@pytest.mark.parametrize("command", ["sweep", "plot"])
def test_help_has_examples(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Usage: sctpsim {command}") and "Examples:" in out


def test_dry_run_lists_runs_and_store_state(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = write_sweep(tmp_path)
    assert cli.main(["sweep", str(sweep), "--out", str(reference), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("small  4 combinations x 3 replications = 12 runs")
    assert out.rstrip().endswith(f"{reference}: 12 finished, 0 failed, 0 to run")
    fresh = tmp_path / "fresh"
    assert cli.main(["sweep", str(sweep), "--out", str(fresh), "--dry-run"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("0 finished, 0 failed, 12 to run")
    assert not fresh.exists()


# ------------------------------------------------------------ [series] summaries


def test_series_statistics_are_the_vector_summary() -> None:
    from sctpsim.stats import series_statistics

    stats = series_statistics([0.1, 0.2, 0.3, 0.4], [1.0, float("nan"), 3.0, 5.0], SERIES_ALL)
    assert stats["count"] == 3.0
    assert (stats["start"], stats["end"]) == (0.1, 0.4)
    assert (stats["min"], stats["mean"], stats["max"]) == (1.0, 3.0, 5.0)
    assert stats["variance"] == pytest.approx(4.0)  # sample variance, n - 1
    assert stats["stdev"] == pytest.approx(2.0)
    empty = series_statistics([], [], SERIES_ALL)
    assert empty["count"] == 0.0 and math.isnan(empty["mean"])


SERIES_ALL = ["count", "start", "end", "max", "mean", "min", "stdev", "variance"]


def test_series_section_adds_per_run_scalars_up_to_until(tmp_path: Path) -> None:
    text = (
        SWEEP_TEXT.replace("replications = 3", "replications = 2")
        + """
[series]
metrics = ["iface/A/eth1/queue_*"]
stats = ["count", "end", "max", "mean"]
until = "flow/path2/delay_max"
"""
    )
    path = write_sweep(tmp_path, text)
    sweep = sctpsim.load_sweep(path)
    assert sweep.series is not None and sweep.series.until == "flow/path2/delay_max"
    outcome = sctpsim.run_sweep(sweep, tmp_path / "out", jobs=1, progress=False)
    runs = outcome.runs
    assert set(runs["status"]) == {"ok"}
    for name in ("queue_packets", "queue_bytes"):
        column = f"iface/A/eth1/{name}_mean"
        assert column in runs and runs[column].notna().all()
        assert runs.attrs["units"][f"iface/A/eth1/{name}_count"] == "samples"
        assert runs.attrs["units"][f"iface/A/eth1/{name}_end"] == "s"
    # Samples stop at the run's own "until" scalar (a small delay: well before the end).
    assert (runs["iface/A/eth1/queue_packets_end"] <= runs["flow/path2/delay_max"]).all()
    assert (runs["iface/A/eth1/queue_packets_count"] < 10).all()
    # The series section is part of a run's identity; without it the identities are the
    # same as before the section existed.
    plain = sctpsim.load_sweep(
        write_sweep(
            tmp_path, SWEEP_TEXT.replace("replications = 3", "replications = 2"), "plain.toml"
        )
    )
    assert {r.run_id for r in plain.runs()}.isdisjoint(r.run_id for r in sweep.runs())
    assert [r.run_id for r in plain.runs()] == [
        r.run_id
        for r in sctpsim.load_sweep(
            write_sweep(
                tmp_path, SWEEP_TEXT.replace("replications = 3", "replications = 2"), "again.toml"
            )
        ).runs()
    ]


def test_series_summary_never_replaces_a_scalar() -> None:
    from sctpsim import _core
    from sctpsim.runner import _series_scalars

    raw = _core.run(EXAMPLE.read_text(encoding="utf-8"), ["duration=1s"], 1, None)
    spec = {"metrics": ["iface/A/eth0/queue_packets"], "stats": ["max"], "until": None}
    derived, units = _series_scalars(raw["timeseries"], spec, {})
    assert list(derived) == ["iface/A/eth0/queue_packets_max"]
    assert units["iface/A/eth0/queue_packets_max"] == "packets"
    with pytest.raises(ValueError, match="would replace a scalar"):
        _series_scalars(raw["timeseries"], spec, {"iface/A/eth0/queue_packets_max": 1.0})


def test_runs_table_is_the_same_whatever_order_the_records_come_in() -> None:
    """The consolidated table, filled one record at a time: rows in run order, scalar
    columns in order of first appearance in run order with that appearance's unit, a
    scalar a run lacks null (NaN stays a value), runs without a record left out."""
    from sctpsim.store import RunRecord, RunsTable
    from sctpsim.sweep import RunSpec

    specs = [
        RunSpec(i, i // 2, {"x": i // 2}, i % 2, 100 + i, (), f"{i:020x}") for i in range(6)
    ]
    records = [
        RunRecord(f"{0:020x}", "ok", None, {"a": 1.0, "c": 3.0}, {"a": "s", "c": "B"}),
        RunRecord(f"{1:020x}", "ok", None, {"b": 2.0, "a": 4.0}, {"b": "m", "a": "other"}),
        RunRecord(f"{2:020x}", "failed", "boom"),
        RunRecord(f"{3:020x}", "ok", None, {"d": math.nan, "b": 5.0}, {"d": "1", "b": "m"}),
        RunRecord(f"{5:020x}", "ok", None, {"a": 6.0}, {"a": "s"}),
    ]

    Built = tuple[list[str], list[list[float | None]], dict[str, str], list[int]]

    def build(order: list[int]) -> Built:
        table = RunsTable(specs)
        for k in order:
            table.add(records[k])
        assert table.missing() == [f"{4:020x}"]
        arrow = table.to_arrow(["x"], "t")
        scalars = [f.name for f in arrow.schema if f.name in ("a", "b", "c", "d")]
        units = {f.name: f.metadata[b"unit"].decode() for f in arrow.schema if f.name in scalars}
        columns = [arrow.column(s).to_pylist() for s in scalars]
        return scalars, columns, units, arrow.column("run").to_pylist()

    first = build([0, 1, 2, 3, 4])
    assert first[0] == ["a", "c", "b", "d"]
    assert first[2] == {"a": "s", "c": "B", "b": "m", "d": "1"}
    assert first[3] == [0, 1, 2, 3, 5]
    assert first[1][0] == [1.0, 4.0, None, None, 6.0]
    assert math.isnan(first[1][3][3]) and first[1][3][0] is None
    for order in ([4, 3, 2, 1, 0], [3, 0, 4, 1, 2], [1, 4, 0, 2, 3]):
        again = build(order)
        assert again[0] == first[0] and again[2] == first[2] and again[3] == first[3]
        assert str(again[1]) == str(first[1])
