"""sctpsim — a deterministic SCTP / IP network simulator.

The simulation engine is written in Rust (the compiled ``sctpsim._core`` module);
this package adds the Python front end.

One run:

* :func:`load_scenario` / :meth:`Scenario.from_dict` build a :class:`Scenario`;
  :meth:`Scenario.with_overrides` changes any key by its key path;
* :func:`run` simulates it (the GIL is released meanwhile) and returns a
  :class:`RunResult` whose ``scalars`` is a Series indexed by
  ``kind/entity/metric`` (units in ``.attrs["units"]``), ``timeseries`` and ``events``
  are DataFrames (``scalar_table`` is the scalars' long form with a unit column), and
  ``to_parquet(dir)`` writes them out; ``packets`` is the SCTP packet log
  (``record.packets = true``); :meth:`RunResult.load` reads a run directory back;
* the result draws its figures: ``paths()``, ``flows()``, ``queues()`` and
  ``sequence()`` return matplotlib figures; :func:`write_run_report` writes the
  run's HTML page (``sctpsim show``);
* :func:`run_file` is the same for a scenario file with ``KEY=VALUE`` overrides.

Sweeps (parameters x replications, resumable, in parallel or on Dask):

* :func:`load_sweep` / :meth:`Sweep.from_dict` read and check a sweep;
* :func:`run_sweep` runs it into a results store and summarises it;
* :func:`load_runs` reads a store's ``runs.parquet``; :func:`summarize` computes
  n, mean, stdev and Student-t confidence intervals; :func:`plot_sweep` draws
  metrics against a parameter, or a heatmap over two;
* :func:`compare_results` compares two runs or two sweeps scalar by scalar
  (``sctpsim compare``).

Real mode (``import sctpsim.real``): :func:`sctpsim.real.sink` and :func:`sctpsim.real.send`
run the same SCTP engine over UDP sockets (SCTP over UDP, RFC 6951) and return a
:class:`RunResult` like a simulation's.

Reproductions: :func:`list_studies` and :func:`load_study` find the bundled studies;
:func:`run_study` runs one and writes its tables, figures and HTML report (the
``sctpsim reproduce`` command).

Example::

    import sctpsim

    base = sctpsim.load_scenario("examples/two-path-cbr.toml", {"duration": "5s"})
    result = sctpsim.run(base.set("links[1].delay", "40ms"), seed=3)
    result.scalars["flow/path1/goodput"]

Scenario problems raise :class:`ScenarioError` (a ``ValueError``) with a one-line
message naming the offending key; ``e.key`` is the key path and ``e.reason`` what is
wrong. Failures during the run raise :class:`SimulationError` (a ``RuntimeError``).
Sweep problems raise :class:`SweepError` (a ``ValueError``, also with ``key`` and
``reason``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sctpsim import _core
from sctpsim._core import ScenarioError, SimulationError

if TYPE_CHECKING:
    from sctpsim.compare import compare_results
    from sctpsim.plot import plot_sweep
    from sctpsim.reproduce import list_studies, load_study, run_study
    from sctpsim.runner import SweepOutcome, run_sweep
    from sctpsim.results import RunResult
    from sctpsim.runreport import write_run_report
    from sctpsim.scenario import Scenario, load_scenario, run
    from sctpsim.stats import summarize
    from sctpsim.store import load_runs
    from sctpsim.sweep import Sweep, SweepError, load_sweep

__version__: str = _core.__version__

__all__ = [
    "RunResult",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "Sweep",
    "SweepError",
    "SweepOutcome",
    "__version__",
    "compare_results",
    "list_studies",
    "load_runs",
    "load_scenario",
    "load_study",
    "load_sweep",
    "plot_sweep",
    "run",
    "run_file",
    "run_study",
    "run_sweep",
    "summarize",
    "write_run_report",
]

# Imported on first use, so that ``import sctpsim`` (and the command line, which imports
# it) loads only what is used: the sweep and study modules pull in pandas, scipy,
# matplotlib or multiprocessing, which ``sctpsim --version`` or a single run does not need.
_LAZY = {
    "RunResult": "sctpsim.results",
    "Scenario": "sctpsim.scenario",
    "load_scenario": "sctpsim.scenario",
    "run": "sctpsim.scenario",
    "Sweep": "sctpsim.sweep",
    "SweepError": "sctpsim.sweep",
    "load_sweep": "sctpsim.sweep",
    "run_sweep": "sctpsim.runner",
    "SweepOutcome": "sctpsim.runner",
    "load_runs": "sctpsim.store",
    "summarize": "sctpsim.stats",
    "plot_sweep": "sctpsim.plot",
    "compare_results": "sctpsim.compare",
    "list_studies": "sctpsim.reproduce",
    "load_study": "sctpsim.reproduce",
    "run_study": "sctpsim.reproduce",
    "write_run_report": "sctpsim.runreport",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sctpsim' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def run_file(
    path: str | os.PathLike[str],
    seed: int | None = None,
    overrides: Iterable[str] = (),
    capture_dir: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run the scenario in the TOML file ``path`` and return its results.

    Args:
        path: scenario file.
        seed: master RNG seed; ``None`` uses the scenario's ``seed`` key (the seed
            actually used is ``result.seed``).
        overrides: ``KEY=VALUE`` strings applied on top of the file, e.g.
            ``["duration=30s", "links[0].delay=20ms"]``.
        capture_dir: directory for the pcap files the scenario asks for (created
            if missing); ``None`` writes no captures.

    Raises:
        OSError: ``path`` cannot be read.
        ScenarioError: the scenario or an override is invalid.
        SimulationError: the run failed.
    """
    from sctpsim.scenario import Scenario

    text = Path(path).read_text(encoding="utf-8")
    return Scenario(text, tuple(overrides), os.fspath(path)).run(seed, capture_dir)
