"""Running a sweep: local processes or a Dask cluster, a results store, a summary.

:func:`run_sweep` expands a :class:`~sctpsim.sweep.Sweep` into runs, skips those
already in the store, runs the rest in parallel and writes each one to the store as
soon as it finishes. Then it rebuilds ``runs.parquet`` and ``summary.csv``.

Backends:

* ``jobs=1``: in this process, one run after another;
* ``jobs=N``: ``N`` local worker processes (``spawn``; the default is one per CPU);
* ``dask="local"``: a ``distributed.LocalCluster`` of ``jobs`` worker processes;
* ``dask="tcp://host:8786"``: an existing Dask cluster (every worker needs the
  same sctpsim version installed; the workers only return results, so they need
  no shared file system).

Only the coordinating process writes to the store. Runs that fail (an invalid
parameter combination, an engine error, a run that kills its worker) are stored with
their error, and the sweep goes on. A worker killed from outside costs no run: the runs
its death broke run again. Workers end when the sweep's process is killed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from sctpsim import _core
from sctpsim.stats import MetricError, check_scalar, expand_metrics, summarize
from sctpsim.store import (
    SUMMARY_FILE,
    SWEEP_COPY,
    RunRecord,
    RunsTable,
    Store,
    forget_tables,
    read_runs,
    write_atomically,
)
from sctpsim.sweep import RunSpec, Sweep

__all__ = [
    "ExecutorError",
    "SweepOutcome",
    "SweepPlan",
    "default_jobs",
    "execute_run",
    "plan_sweep",
    "run_sweep",
]


#: How long to wait for an existing Dask scheduler to answer.
DASK_CONNECT_TIMEOUT = "20s"


class ExecutorError(RuntimeError):
    """The runs could not be dispatched (e.g. no Dask scheduler at the given address)."""


def default_jobs() -> int:
    """The number of CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# ------------------------------------------------------------------ one run


def _task(sweep: Sweep, spec: RunSpec) -> dict[str, Any]:
    """What a worker needs for one run: plain data, cheap to pickle."""
    return {
        "run_id": spec.run_id,
        "text": sweep.scenario.text,
        "overrides": list(spec.overrides),
        "seed": spec.seed,
        "series": sweep.series.to_dict() if sweep.series is not None else None,
    }


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def execute_run(task: Mapping[str, Any]) -> dict[str, Any]:
    """Simulate one run and return its record as a dict (runs in worker processes).

    Never raises for a failing run: scenario errors, simulation errors and engine
    panics become a record with status ``failed`` and the error message.
    """
    run_id = str(task["run_id"])
    try:
        raw = _core.run(str(task["text"]), list(task["overrides"]), int(task["seed"]), None)
    except _core.ScenarioError as e:
        return RunRecord(run_id, "failed", f"invalid scenario: {_one_line(str(e))}").to_dict()
    except _core.SimulationError as e:
        return RunRecord(run_id, "failed", f"simulation failed: {_one_line(str(e))}").to_dict()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a Rust panic surfaces as a BaseException
        return RunRecord(
            run_id, "failed", f"engine error: {type(e).__name__}: {_one_line(str(e))}"
        ).to_dict()
    sc = raw["scalars"]
    scalars: dict[str, float] = {}
    units: dict[str, str] = {}
    for kind, entity, metric, value, unit in zip(
        sc["kind"], sc["entity"], sc["metric"], sc["value"], sc["unit"], strict=True
    ):
        name = f"{kind}/{entity}/{metric}"
        scalars[name] = float("nan") if value is None else float(value)
        units[name] = str(unit)
    series = task.get("series")
    if series:
        try:
            derived, derived_units = _series_scalars(raw["timeseries"], series, scalars)
        except ValueError as e:
            return RunRecord(run_id, "failed", f"series summary: {_one_line(str(e))}").to_dict()
        scalars.update(derived)
        units.update(derived_units)
    return RunRecord(run_id, "ok", None, scalars, units).to_dict()


def _series_scalars(
    raw: Mapping[str, Any], series: Mapping[str, Any], scalars: Mapping[str, float]
) -> tuple[dict[str, float], dict[str, str]]:
    """The ``[series]`` summary of one run's time series (see :class:`SeriesSummary`)."""
    from sctpsim.results import decode_timeseries
    from sctpsim.stats import series_scalars

    names, time_s, index, values = decode_timeseries(raw)
    until_name = series.get("until")
    until = scalars.get(until_name) if until_name else None
    if until is not None and until != until:  # NaN: the run lacks the instant
        until = None
    out, units = series_scalars(
        names, time_s, index, values, series["metrics"], series["stats"], until
    )
    clash = next((n for n in out if n in scalars), None)
    if clash is not None:
        raise ValueError(f"{clash} would replace a scalar of the same name")
    return out, units


# ----------------------------------------------------------------- backends

Done = Callable[[dict[str, Any]], None]


def _run_inline(tasks: Sequence[dict[str, Any]], done: Done) -> None:
    for task in tasks:
        done(execute_run(task))


def _run_processes(tasks: Sequence[dict[str, Any]], jobs: int, done: Done) -> None:
    """Run ``tasks`` in ``jobs`` worker processes.

    A worker that dies (killed, or out of memory) breaks the whole pool: every run not yet
    finished then fails with it. So the runs no worker had started go to a new pool, and
    each run that was in progress is run again alone: only a run that kills its worker
    by itself is stored as failed.
    """
    todo = list(tasks)
    idle_deaths = 0
    while todo:
        before = len(todo)
        in_progress, todo = _pool_pass(todo, min(jobs, len(todo)), done, alone=False)
        for task in in_progress:
            _pool_pass([task], 1, done, alone=True)
        idle_deaths = idle_deaths + 1 if not in_progress and len(todo) == before else 0
        if idle_deaths >= 3:
            raise ExecutorError("the worker processes keep dying before they start a run")


def _pool_pass(
    tasks: Sequence[dict[str, Any]], jobs: int, done: Done, *, alone: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One pool over ``tasks``. If a worker dies, returns the runs it broke: those that
    had started and those that had not (with ``alone``, the one run is stored as failed).
    """
    context = get_context("spawn")
    started = context.SimpleQueue()
    by_future: dict[Future[dict[str, Any]], dict[str, Any]] = {}
    broken: list[dict[str, Any]] = []
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_worker_init, initargs=(started, os.getpid())
    ) as pool:
        try:
            for task in tasks:
                by_future[pool.submit(_worker_run, task)] = task
            pending = set(by_future)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    task = by_future[fut]
                    if isinstance(fut.exception(), BrokenProcessPool) and not alone:
                        broken.append(task)
                    else:
                        done(_outcome(fut, task))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    began = set()
    while not started.empty():
        began.add(started.get())
    return (
        [t for t in broken if t["run_id"] in began],
        [t for t in broken if t["run_id"] not in began],
    )


#: In a worker process: where it says which run it starts (see :func:`_pool_pass`).
_started: Any = None


def _worker_init(started: Any, parent: int) -> None:
    """Set up a worker process: its queue of started runs, and an end of its own when the
    sweep's process ``parent`` is gone (killed: nobody else would stop it)."""
    global _started
    _started = started

    def watch_parent() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch_parent, name="sctpsim-parent-watch", daemon=True).start()


def _worker_run(task: Mapping[str, Any]) -> dict[str, Any]:
    _started.put(task["run_id"])
    return execute_run(task)


def _outcome(fut: Any, task: Mapping[str, Any]) -> dict[str, Any]:
    """A future's record; a worker that died becomes a failed run."""
    exc = fut.exception()
    if exc is None:
        return dict(fut.result())
    if isinstance(exc, KeyboardInterrupt):  # Ctrl-C reached the workers too
        raise KeyboardInterrupt
    if isinstance(exc, BrokenProcessPool):
        return RunRecord(
            str(task["run_id"]),
            "failed",
            "worker died while running it, alone in its pool (killed, or out of memory)",
        ).to_dict()
    return RunRecord(
        str(task["run_id"]), "failed", f"worker failed: {type(exc).__name__}: {_one_line(str(exc))}"
    ).to_dict()


@contextlib.contextmanager
def _dask_client(address: str, jobs: int) -> Iterator[Any]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ExecutorError(
            "--dask needs dask.distributed (pip install 'dask[distributed]')"
        ) from None
    if address == "local":
        cluster = LocalCluster(
            n_workers=jobs,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        try:
            with Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = Client(address, timeout=DASK_CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise ExecutorError(
            f"cannot connect to the Dask scheduler at {address}: {_one_line(str(e))}"
        ) from None
    try:
        yield client
    finally:
        client.close()


def _run_dask(tasks: Sequence[dict[str, Any]], address: str, jobs: int, done: Done) -> None:
    from dask.distributed import as_completed

    with _dask_client(address, jobs) as client:
        futures = [
            client.submit(execute_run, task, key=f"sctpsim-run-{task['run_id']}", pure=False)
            for task in tasks
        ]
        by_key = {f.key: t for f, t in zip(futures, tasks, strict=True)}
        try:
            for fut in as_completed(futures):
                done(_outcome(fut, by_key[fut.key]))
        except BaseException:
            client.cancel(futures)
            raise


# ------------------------------------------------------------------ a sweep


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did.

    Attributes:
        directory: the results store.
        sweep: the sweep that ran.
        runs: ``runs.parquet`` as a DataFrame (``attrs["units"]``, ``attrs["parameters"]``).
        summary: one row per (parameter combination, metric); also ``summary.csv``.
        metrics: the summarised scalar columns (glob patterns expanded).
        executed: runs simulated now (including invalid combinations recorded now).
        reused: runs found finished in the store and skipped.
        failed: the rows of ``runs`` whose status is ``failed``.
    """

    directory: Path
    sweep: Sweep
    runs: pd.DataFrame
    summary: pd.DataFrame
    metrics: list[str]
    executed: int = 0
    reused: int = 0
    failed: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def total(self) -> int:
        """The number of runs in the sweep."""
        return len(self.runs)

    def __repr__(self) -> str:
        return (
            f"SweepOutcome({self.sweep.name!r}, directory={str(self.directory)!r}, "
            f"runs={self.total}, failed={len(self.failed)}, executed={self.executed}, "
            f"reused={self.reused})"
        )


class _Progress:
    """A rich progress bar with completed/total, failures and ETA (or nothing)."""

    def __init__(self, console: Console | None, name: str, total: int, already: int) -> None:
        self.failed = 0
        self._progress: Progress | None = None
        if console is None:
            return
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("runs, {task.fields[failed]} failed"),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self._task = self._progress.add_task(name, total=total, completed=already, failed=0)

    def __enter__(self) -> _Progress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def advance(self, ok: bool) -> None:
        if not ok:
            self.failed += 1
        if self._progress is not None:
            self._progress.update(self._task, advance=1, failed=self.failed)


@dataclass
class SweepPlan:
    """What :func:`run_sweep` would do (see :func:`plan_sweep`).

    Attributes:
        directory: the results store.
        runs: every run of the sweep, in run order.
        done: ids of runs stored with status ``ok`` (they would be skipped).
        failed: ids of runs stored with status ``failed`` (they would be retried).
    """

    directory: Path
    runs: list[RunSpec]
    done: set[str]
    failed: set[str]

    @property
    def to_run(self) -> int:
        """The number of runs that would be simulated."""
        return len(self.runs) - len(self.done)


def default_directory(sweep: Sweep) -> Path:
    """``results/<name>``, the default results store of ``sweep``."""
    return Path("results") / _safe_name(sweep.name)


def plan_sweep(sweep: Sweep, out: str | os.PathLike[str] | None = None) -> SweepPlan:
    """Expand ``sweep`` and look up its runs in the store ``out``; writes nothing."""
    directory = Path(out) if out is not None else default_directory(sweep)
    specs = sweep.runs()
    store = Store(directory)
    done: set[str] = set()
    failed: set[str] = set()
    if store.runs_dir.is_dir():
        stored = store.stored_ids()
        for spec in specs:
            record = store.read(spec.run_id) if spec.run_id in stored else None
            if record is not None:
                (done if record.ok else failed).add(spec.run_id)
    return SweepPlan(directory, specs, done, failed)


def run_sweep(
    sweep: Sweep,
    out: str | os.PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    dask: str | None = None,
    progress: bool | Console = True,
) -> SweepOutcome:
    """Run every run of ``sweep`` not yet in the store ``out``; return the results.

    Args:
        sweep: the sweep (:func:`sctpsim.load_sweep` or :meth:`Sweep.from_dict`).
        out: results directory; default ``results/<sweep name>``. Rerunning with
            the same directory resumes: finished runs are skipped, failed ones
            retried.
        jobs: parallel local processes (default: one per CPU; 1 runs in this
            process); with ``dask="local"``, the number of Dask workers.
        dask: ``None`` for local processes, ``"local"`` for a local Dask cluster,
            or a scheduler address such as ``"tcp://10.0.0.5:8786"``.
        progress: show a progress bar (on stderr), or the rich Console to draw on.

    Raises:
        StoreError: ``out`` cannot be used as a results store.
        ExecutorError: the Dask cluster cannot be reached.
        MetricError: a metric, or ``series.until``, names no scalar (the runs are stored; fix the sweep
            and rerun, which reuses them).
        KeyboardInterrupt: the finished runs are stored; rerun to resume.
    """
    directory = Path(out) if out is not None else default_directory(sweep)
    specs = sweep.runs()
    parameters = sweep.parameters
    jobs = default_jobs() if jobs is None else max(1, int(jobs))
    console: Console | None
    if isinstance(progress, Console):
        console = progress
    else:
        console = Console(stderr=True) if progress else None

    with Store(directory) as store:
        if sweep.source is not None:
            text = Path(sweep.source).read_text(encoding="utf-8")
            write_atomically(
                directory / SWEEP_COPY, lambda p: Path(p).write_text(text, encoding="utf-8")
            )
        stored = store.stored_ids()
        pending: list[RunSpec] = []
        # Each record goes into the table as it is read or written, and is not kept.
        table = RunsTable(specs)
        reused = 0
        for spec in specs:
            record = store.read(spec.run_id) if spec.run_id in stored else None
            if record is not None and record.ok:
                reused += 1
                table.add(record)
            else:
                pending.append(spec)
        by_id = {s.run_id: s for s in pending}

        with _Progress(console, sweep.name, len(specs), reused) as bar:

            def done(raw: dict[str, Any]) -> None:
                record = RunRecord.from_dict(raw)
                store.write(by_id[record.run_id], record)
                table.add(record)
                bar.advance(record.ok)

            # Combinations the scenario rejects are recorded without simulating.
            for spec in pending:
                if spec.error is not None:
                    done(RunRecord(spec.run_id, "failed", spec.error).to_dict())
            tasks = [_task(sweep, s) for s in pending if s.error is None]
            if tasks:
                if dask is not None:
                    _run_dask(tasks, dask, jobs, done)
                elif jobs == 1 or len(tasks) == 1:
                    _run_inline(tasks, done)
                else:
                    _run_processes(tasks, min(jobs, len(tasks)), done)

        store.consolidate(specs, parameters, sweep.name, table)
        loaded = read_runs(directory)
        runs = loaded.frame
        try:
            metrics = expand_metrics(sweep.metrics, loaded.scalars)
            if sweep.series is not None and sweep.series.until is not None:
                # A name no run has would silently mean "every sample" (see execute_run).
                check_scalar("series.until", sweep.series.until, loaded.scalars)
        except MetricError:
            # The runs stay stored; no table is left to look like a finished sweep.
            forget_tables(directory)
            raise
        summary = summarize(runs, parameters, metrics, loaded.units)
        write_atomically(
            directory / SUMMARY_FILE,
            lambda p: summary.to_csv(p, index=False, lineterminator="\n", na_rep="NaN"),
        )
    failed = runs[runs["status"] != "ok"]
    return SweepOutcome(
        directory=directory,
        sweep=sweep,
        runs=runs,
        summary=summary,
        metrics=metrics,
        executed=len(pending),
        reused=reused,
        failed=failed,
    )


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("._") or "sweep"
