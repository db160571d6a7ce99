"""``sctpsim compare DIR_A DIR_B``: two runs or two sweeps, scalar by scalar, with the
exit status a script can test (0 equal, 1 different, 2 unusable input)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from sctpsim import cli
from sctpsim.compare import compare_results
from sctpsim.results import read_scalars

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two-path-cbr.toml"

SWEEP = f"""
name = "small"
scenario = "{EXAMPLE.as_posix()}"
seed = 7
replications = 2
metrics = ["flow/path2/goodput", "flow/*/loss_rate"]

[set]
duration = "1s"

[grid]
"links[3].loss.p" = [0.01, 0.05]
"links[3].delay" = ["5ms", "20ms"]
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of the same scenario and seed (a and b), and one with a later end (c)."""
    tmp = tmp_path_factory.mktemp("runs")
    for name, extra in (("a", []), ("b", []), ("c", ["--set", "duration=1.5s"])):
        args = ["run", str(EXAMPLE), "--out", str(tmp / name), "-q", "--set", "duration=1s"]
        assert cli.main([*args, *extra]) == 0
    return tmp


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same sweep twice (a with one process, b with two) and a sweep whose loss
    values differ in one of their two points (c)."""
    tmp = tmp_path_factory.mktemp("sweeps")
    (tmp / "s.toml").write_text(SWEEP, encoding="utf-8")
    (tmp / "c.toml").write_text(SWEEP.replace("0.01, 0.05", "0.01, 0.1"), encoding="utf-8")
    for name, file, jobs in (("a", "s", "1"), ("b", "s", "2"), ("c", "c", "1")):
        args = ["sweep", str(tmp / f"{file}.toml"), "--out", str(tmp / name), "-q", "--jobs", jobs]
        assert cli.main(args) == 0
    return tmp


def _edit_scalar(directory: Path, metric: str, factor: float) -> float:
    """Scale one scalar of a run directory in place; return its old value."""
    path = directory / "scalars.csv"
    frame = read_scalars(directory)
    row = frame.index[(frame["kind"] + "/" + frame["entity"] + "/" + frame["metric"]) == metric][0]
    old = float(frame.loc[row, "value"])
    frame.loc[row, "value"] = old * factor
    frame.to_csv(path, index=False, lineterminator="\n", na_rep="NaN")
    return old


# ---------------------------------------------------------------------- runs


def test_equal_runs_exit_0(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compare", str(runs / "a"), str(runs / "b")]) == 0
    out = capsys.readouterr().out
    assert "0 differ (rtol 0); equal" in out
    assert "Scalars that differ" not in out


def test_a_changed_scalar_exits_1_and_is_listed(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = tmp_path / "b"
    shutil.copytree(runs / "b", b)
    old = _edit_scalar(b, "flow/path1/goodput", 1.5)
    assert cli.main(["compare", str(runs / "a"), str(b)]) == 1
    out = capsys.readouterr().out
    assert "flow/path1/goodput" in out and "+50 %" in out
    assert f"{old:.10g}" in out and f"{old * 1.5:.10g}" in out
    assert "1 differ (rtol 0); different" in out
    # The API says the same.
    import sctpsim

    assert sctpsim.compare_results is compare_results
    diff = compare_results(runs / "a", b)
    assert not diff.equal and list(diff.differences["scalar"]) == ["flow/path1/goodput"]
    assert diff.differences["rel_diff"].iloc[0] == pytest.approx(0.5)


def test_rtol_is_respected(runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = tmp_path / "b"
    shutil.copytree(runs / "b", b)
    _edit_scalar(b, "flow/path1/goodput", 1 + 1e-6)
    assert cli.main(["compare", str(runs / "a"), str(b)]) == 1
    assert cli.main(["compare", str(runs / "a"), str(b), "--rtol", "1e-7"]) == 1
    assert cli.main(["compare", str(runs / "a"), str(b), "--rtol", "1e-5"]) == 0
    capsys.readouterr()


def test_different_runs_list_what_changed(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compare", str(runs / "a"), str(runs / "c")]) == 1
    out = capsys.readouterr().out
    assert "run/run/sim_time" in out
    assert cli.main(["compare", str(runs / "a"), str(runs / "c"), "--all"]) == 1
    listed = capsys.readouterr().out
    assert listed.count("\n") > out.count("\n")  # equal scalars too, marked =
    assert " = " in listed or "│ =" in listed


def test_a_scalar_on_one_side_only_differs(runs: Path, tmp_path: Path) -> None:
    b = tmp_path / "b"
    shutil.copytree(runs / "b", b)
    frame = read_scalars(b)
    frame.iloc[1:].to_csv(b / "scalars.csv", index=False, lineterminator="\n", na_rep="NaN")
    diff = compare_results(runs / "a", b)
    assert not diff.equal and len(diff.differences) == 1
    assert pd.isna(diff.differences["b"].iloc[0])


# -------------------------------------------------------------------- sweeps


def test_equal_sweeps_exit_0(sweeps: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compare", str(sweeps / "a"), str(sweeps / "b")]) == 0
    assert "in 8 matched runs: 0 differ" in capsys.readouterr().out


def test_sweeps_are_matched_by_parameters_and_unmatched_runs_listed(
    sweeps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["compare", str(sweeps / "a"), str(sweeps / "c")]) == 1
    out = capsys.readouterr().out
    # loss 0.01 is in both (4 runs); 0.05 only in A and 0.1 only in B.
    assert "in 4 matched runs, 8 unmatched runs: 0 differ" in out
    assert out.count("only in A: links[3].loss.p=0.05") == 4
    assert out.count("only in B: links[3].loss.p=0.1") == 4
    diff = compare_results(sweeps / "a", sweeps / "c")
    assert diff.keys == ["links[3].loss.p", "links[3].delay", "replication"]
    assert set(diff.frame["links[3].loss.p"]) == {"0.01"}


def test_a_changed_run_of_a_sweep_is_listed_with_its_parameters(
    sweeps: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # one line per row, whatever the temporary path
    b = tmp_path / "b"
    shutil.copytree(sweeps / "b", b)
    table = pq.read_table(b / "runs.parquet")
    frame = table.to_pandas()
    row = frame.index[
        (frame["links[3].loss.p"] == 0.05)
        & (frame["links[3].delay"] == "20ms")
        & (frame["replication"] == 1)
    ][0]
    column = table.schema.get_field_index("flow/path2/goodput")
    values = table.column(column).to_pylist()
    values[row] *= 0.9
    import pyarrow as pa

    table = table.set_column(column, table.schema.field(column), pa.array(values, pa.float64()))
    pq.write_table(table, b / "runs.parquet")
    assert cli.main(["compare", str(sweeps / "a"), str(b)]) == 1
    out = capsys.readouterr().out
    assert "1 differ" in out and "flow/path2/goodput" in out and "-10 %" in out
    diff = compare_results(sweeps / "a", b)
    (r,) = diff.differences.to_dict("records")
    assert (r["links[3].loss.p"], r["links[3].delay"], r["replication"]) == ("0.05", "20ms", "1")


def test_numerically_equal_parameters_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # [0, 1] is stored as integers, [0, 0.01, 1] as floats: 0 and 0.0 are one run.
    for name, values in (("ints", "[0, 1]"), ("floats", "[0, 0.01, 1]")):
        text = SWEEP.replace("[0.01, 0.05]", values).replace("replications = 2", "replications = 1")
        (tmp_path / f"{name}.toml").write_text(text, encoding="utf-8")
        args = ["sweep", str(tmp_path / f"{name}.toml"), "--out", str(tmp_path / name), "-q"]
        assert cli.main([*args, "--jobs", "1"]) == 0
    assert pd.read_parquet(tmp_path / "floats" / "runs.parquet")["links[3].loss.p"].dtype == "float64"
    capsys.readouterr()
    diff = compare_results(tmp_path / "ints", tmp_path / "floats")
    assert diff.only_a == []
    assert diff.only_b == [
        "links[3].loss.p=0.01, links[3].delay=5ms, replication=0",
        "links[3].loss.p=0.01, links[3].delay=20ms, replication=0",
    ]
    assert len(diff.frame.drop_duplicates(diff.keys)) == 4
    assert set(diff.frame["links[3].loss.p"]) == {"0", "1"}  # as A wrote them
    # plot --where matches the same way.
    floats = str(tmp_path / "floats")
    for where in ("links[3].loss.p=0", "links[3].loss.p=1"):
        args = ["plot", floats, "--x", "links[3].delay", "--y", "flow/path2/goodput"]
        assert cli.main([*args, "--where", where]) == 0, capsys.readouterr().err


# -------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        (("runs/a", "sweeps/a"), "is a run directory but"),
        (("runs/a", "nowhere"), "nowhere: no such directory"),
        (("runs/a", "empty"), "empty: not a run or sweep directory"),
        (("runs/a", "afile"), "afile: not a directory (expected a run or sweep directory)"),
        (("afile", "runs/a"), "afile: not a directory (expected a run or sweep directory)"),
    ],
)
def test_unusable_input_is_one_line_and_exit_2(
    runs: Path,
    sweeps: Path,
    tmp_path: Path,
    pair: tuple[str, str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("a file")
    places = {"runs": runs, "sweeps": sweeps}

    def where(p: str) -> str:
        head, _, tail = p.partition("/")
        return str(places[head] / tail) if head in places else str(tmp_path / p)

    assert cli.main(["compare", where(pair[0]), where(pair[1])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("damaged", ["a", "b"])
def test_a_damaged_scalars_file_is_one_line(
    runs: Path, tmp_path: Path, damaged: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        shutil.copytree(runs / name, tmp_path / name)
    (tmp_path / damaged / "scalars.csv").write_text("a,b\n", encoding="utf-8")
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path / damaged / 'scalars.csv'}: not a run's scalars table "
        "(no column kind; it has: a, b)\n"
    )


def test_sweeps_of_different_parameters_cannot_be_matched(
    sweeps: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.toml"
    other.write_text(SWEEP.replace('"links[3].delay"', '"links[1].delay"'), encoding="utf-8")
    assert cli.main(["sweep", str(other), "--out", str(tmp_path / "o"), "-q", "--jobs", "1"]) == 0
    capsys.readouterr()
    assert cli.main(["compare", str(sweeps / "a"), str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "the sweeps vary different parameters" in err and err.count("\n") == 1


def test_negative_rtol_and_no_traceback_from_the_shell(runs: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sctpsim", "compare", str(runs / "a"), str(runs / "b"), "--rtol", "-1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and "--rtol" in proc.stderr
