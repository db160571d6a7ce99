"""sctpsim — a deterministic SCTP / IP network simulator.

The simulation engine is written in Rust (the compiled ``sctpsim._core`` module);
this package adds the Python front end:

* :func:`run_file` runs a scenario file and returns a :class:`RunResult`, whose
  ``scalars``, ``timeseries`` and ``events`` are pandas DataFrames;
* :func:`sctpsim.results.write_run` saves a result directory atomically;
* :mod:`sctpsim.cli` is the ``sctpsim`` command (``sctpsim --help``).

Example::

    import sctpsim

    result = sctpsim.run_file("examples/two-path-cbr.toml", seed=1,
                              overrides=["duration=5s"])
    print(result.scalars.query("kind == 'flow' and metric == 'goodput'"))
    queues = result.timeseries.query("metric == 'queue_packets'")

Scenario problems raise :class:`ScenarioError` (a ``ValueError``) with a one-line
message naming the offending key; failures during the run raise
:class:`SimulationError` (a ``RuntimeError``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from sctpsim import _core
from sctpsim._core import ScenarioError, SimulationError
from sctpsim.results import RunResult

__version__: str = _core.__version__

__all__ = [
    "RunResult",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "run_file",
]


def run_file(
    path: str | os.PathLike[str],
    seed: int | None = None,
    overrides: Iterable[str] = (),
    capture_dir: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run the scenario in the TOML file ``path`` and return its results.

    Args:
        path: scenario file.
        seed: master RNG seed; ``None`` uses the scenario's ``seed`` key (the
            seed actually used is ``result.seed``).
        overrides: ``KEY=VALUE`` strings applied on top of the file, e.g.
            ``["duration=30s", "links[0].delay=20ms"]``.
        capture_dir: directory for the pcap files the scenario asks for (created
            if missing); ``None`` writes no captures.

    Raises:
        OSError: ``path`` cannot be read.
        ScenarioError: the scenario or an override is invalid.
        SimulationError: the run failed.
    """
    text = Path(path).read_text(encoding="utf-8")
    capture: str | None = None
    if capture_dir is not None:
        # The core expects an existing directory; creating it here saves every
        # caller the same boilerplate.
        Path(capture_dir).mkdir(parents=True, exist_ok=True)
        capture = os.fspath(capture_dir)
    return RunResult(_core.run(text, list(overrides), seed, capture))
