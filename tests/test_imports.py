"""What each command imports: a command loads only the modules it uses.

`sctpsim --version` and `--help` must start in a few tens of milliseconds, which rules out
pandas, numpy, pyarrow, matplotlib (hundreds of milliseconds) and even rich (about 40 ms);
`sctpsim run` prints its summary with rich and has the core write its files, so it needs
none of the data libraries either. Each case runs in a fresh interpreter and reports the
heavy modules present in ``sys.modules`` when the command has finished: a behavioural
check of the import graph, not a timing test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "two-path-cbr.toml"

DATA_LIBRARIES = ("pandas", "numpy", "pyarrow", "matplotlib", "scipy", "dask")


def loaded_after(code: str, cwd: Path) -> tuple[set[str], str]:
    """Run ``code`` in a fresh interpreter; return the top-level packages it imported
    (of those that matter here) and its stderr."""
    probe = (
        "import json, sys\n"
        f"{code}\n"
        "roots = sorted({m.split('.')[0] for m in sys.modules})\n"
        "print('\\nMODULES=' + json.dumps(roots))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, check=False
    )
    last = proc.stdout.rstrip().rsplit("\n", 1)[-1]
    assert last.startswith("MODULES="), f"no module list: {proc.stdout!r} {proc.stderr!r}"
    return set(json.loads(last.removeprefix("MODULES="))), proc.stderr


def cli_call(*args: str) -> str:
    """Code that runs ``sctpsim ARGS`` in-process and records its exit status."""
    return (
        "from sctpsim.cli import main\n"
        f"status = main({list(args)!r})\n"
        "print('\\nSTATUS=' + str(status))\n"
    )


@pytest.mark.parametrize(
    "code",
    ["import sctpsim", "import sctpsim.cli", cli_call("--version"), cli_call("--help")],
    ids=["import sctpsim", "import sctpsim.cli", "--version", "--help"],
)
def test_start_up_imports_no_data_library_and_no_rich(code: str, tmp_path: Path) -> None:
    loaded, err = loaded_after(code, tmp_path)
    assert "sctpsim" in loaded and "click" in loaded or code == "import sctpsim"
    heavy = loaded & {*DATA_LIBRARIES, "rich"}
    assert not heavy, f"{code!r} imported {sorted(heavy)} {err}"


@pytest.mark.parametrize(
    "args",
    [
        ("params",),
        ("params", "--markdown"),
        ("check", str(EXAMPLE)),
        ("run", "missing.toml"),
        ("sweep", "--help"),
        ("reproduce", "--help"),
    ],
    ids=" ".join,
)
def test_light_commands_import_no_data_library(args: tuple[str, ...], tmp_path: Path) -> None:
    loaded, err = loaded_after(cli_call(*args), tmp_path)
    heavy = loaded & set(DATA_LIBRARIES)
    assert not heavy, f"sctpsim {' '.join(args)} imported {sorted(heavy)} {err}"


def test_lazy_package_attributes_still_resolve(tmp_path: Path) -> None:
    # `import sctpsim` defers its submodules; every public name must still be there.
    code = (
        "import sctpsim\n"
        "missing = [n for n in sctpsim.__all__ if not hasattr(sctpsim, n)]\n"
        "assert not missing, missing\n"
        "assert set(sctpsim.__all__) <= set(dir(sctpsim))\n"
        "from sctpsim import RunResult, Scenario, Sweep, SweepError, load_scenario, run\n"
        "assert issubclass(SweepError, ValueError)\n"
    )
    loaded, err = loaded_after(code, tmp_path)
    assert "sctpsim" in loaded, err


def test_run_writes_its_results_without_any_data_library(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = cli_call("run", str(EXAMPLE), "--set", "duration=1s", "--out", str(out))
    loaded, err = loaded_after(code, tmp_path)
    heavy = loaded & set(DATA_LIBRARIES)
    assert not heavy, f"sctpsim run imported {sorted(heavy)} {err}"
    assert "rich" in loaded  # it did print the summary tables
    names = {p.name for p in out.iterdir()}
    assert {"events.parquet", "scalars.csv", "scenario.toml", "timeseries.parquet"} <= names
