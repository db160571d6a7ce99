"""Reproductions of published results: ``sctpsim reproduce``.

A *study* is a directory under ``sctpsim/studies/`` (``studies/`` in the repository is a
link to it, so the studies ship inside the wheel as package data)::

    studies/NAME/
      study.toml          title, one-line summary, the paper, the sweeps (with --quick settings)
      *.toml              scenario templates
      sweeps/*.toml       ordinary sweep files (sctpsim sweep runs them too)
      reference.csv       the paper's numbers, each with the table/figure it comes from
      analysis.py         builds the comparison tables, figures and texts from the sweeps
      README.md           the set-up, the assumptions the paper leaves open, model notes

:func:`run_study` runs every sweep of a study through the ordinary sweep runner
(:func:`sctpsim.run_sweep`: parallel, ``--dask``, resumable, one store per sweep), then
calls the study's ``analysis.analyse(ctx)`` with a :class:`StudyContext`. The analysis
returns :class:`Comparison` tables (the paper's number beside ours, with our 95% CI and
the difference), free-form :class:`Table` s (results the paper has no number for) and
:class:`Figure` files, in report order; the framework writes the tables as CSV, prints
them, and writes one self-contained HTML report (:mod:`sctpsim.report`). A comparison
with a :class:`Matrix` is shown in the paper's own shape (rows and columns as the paper
prints them); one whose matrix names a two-parameter ``grid`` also gets a heatmap
(:func:`grid_heatmap`).

``study.toml``::

    title = "Failover tuning over Wi-Fi and LTE"
    summary = "failover time and goodput vs Path.Max.Retrans x RTO.Max; TCP vs SCTP"
    paper = "T. Yokogawa, Fast Handover with SCTP Parameter tuning in Wireless LAN"
    paper_id = "004"                     # the file in the project's papers/ collection
    [[sweeps]]
    name = "failover"                    # the analysis refers to it by this name
    file = "sweeps/failover.toml"
    quick = { replications = 2, set = { duration = "60s" } }   # what --quick changes
    # quick may also give [[zip]] groups: each replaces the sweep file's groups that share
    # a key with it (e.g. fewer values of a zipped parameter); one sharing none is added.

``reference.csv`` has at least the columns ``ref`` (a unique id), ``source`` (``Table 6``,
``Fig. 3``, ``Section 10``), ``platform``, ``quantity``, ``unit`` and ``value``; studies add
their own key columns. Every reference number must appear in one of the comparison tables
(the tests check it).

Output directory (default ``results/reproduce/NAME``, or ``NAME-quick``)::

    sweeps/<sweep>/        the sweep stores (runs/, runs.parquet, summary.csv, sweep.toml)
    runs/<label>/          single runs the analysis made for time-series figures
    tables/<id>.csv        one file per comparison table
    figures/<id>.png/.svg  the paper's plots redrawn from our data, and <table>-heatmap.*
    report.html            everything above in one file that opens offline
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from sctpsim import _toml
from sctpsim.plot import _text  # a parameter value as the sweep file writes it
from sctpsim.sweep import Sweep, SweepError

__all__ = [
    "COMPARISON_COLUMNS",
    "Comparison",
    "Estimate",
    "Figure",
    "Matrix",
    "Study",
    "StudyContext",
    "StudyError",
    "StudyOutcome",
    "StudySweep",
    "Table",
    "compare",
    "list_studies",
    "load_study",
    "run_study",
    "studies_root",
]

#: Columns every comparison table has after its label columns, in this order.
COMPARISON_COLUMNS: tuple[str, ...] = (
    "quantity",
    "unit",
    "paper",
    "ours",
    "ci95_low",
    "ci95_high",
    "n",
    "diff",
    "diff_pct",
    "ref",
    "note",
)

_STUDY_KEYS = ("title", "summary", "paper", "paper_id", "sweeps")
_SWEEP_KEYS = ("name", "file", "quick")
_QUICK_KEYS = ("replications", "set", "grid", "zip")
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


class StudyError(ValueError):
    """An unknown study, or a study whose files are wrong: one line for the user."""


# ------------------------------------------------------------------ studies


def studies_root() -> Path:
    """The directory holding the bundled studies (inside the installed package)."""
    return Path(str(resources.files("sctpsim") / "studies"))


@dataclass(frozen=True)
class StudySweep:
    """One sweep of a study: its name, its file and what ``--quick`` changes in it."""

    name: str
    file: Path
    quick: Mapping[str, Any] = field(default_factory=dict)

    def definition(self, quick: bool) -> dict[str, Any]:
        """The sweep file's data, with the ``quick`` settings applied when asked."""
        try:
            data: dict[str, Any] = tomllib.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise StudyError(f"{self.file}: {e}") from None
        data.setdefault("name", self.name)
        if not quick:
            return data
        if "replications" in self.quick:
            data["replications"] = self.quick["replications"]
        for key in ("set", "grid"):
            if key in self.quick:
                data[key] = {**data.get(key, {}), **self.quick[key]}
        if "zip" in self.quick:
            groups = data.get("zip", [])
            groups = [groups] if isinstance(groups, dict) else list(groups)
            quick_groups = self.quick["zip"]
            quick_groups = [quick_groups] if isinstance(quick_groups, dict) else list(quick_groups)
            for q in quick_groups:
                # In place of the first group it shares a key with (the order of the groups
                # is the order of the runs), the others it shares a key with dropped.
                at = next((i for i, g in enumerate(groups) if set(g) & set(q)), len(groups))
                groups = [g for i, g in enumerate(groups) if i == at or not set(g) & set(q)]
                groups[at:at + 1] = [q]
            data["zip"] = groups
        return data

    def load(self, quick: bool) -> Sweep:
        """The checked :class:`~sctpsim.sweep.Sweep`."""
        try:
            return Sweep.from_dict(self.definition(quick), base_dir=self.file.parent)
        except SweepError as e:
            raise StudyError(f"{self.file}: {e}") from None


@dataclass(frozen=True)
class Study:
    """A bundled study (see the module docs)."""

    name: str
    directory: Path
    title: str
    summary: str
    paper: str
    paper_id: str
    sweeps: tuple[StudySweep, ...]

    @property
    def reference_file(self) -> Path:
        return self.directory / "reference.csv"

    @property
    def readme(self) -> Path:
        return self.directory / "README.md"

    def reference(self) -> pd.DataFrame:
        """The paper's numbers (``reference.csv``), one row each."""
        frame = pd.read_csv(self.reference_file, dtype={"ref": str}, keep_default_na=False)
        missing = {"ref", "source", "platform", "quantity", "unit", "value"} - set(frame)
        if missing:
            raise StudyError(f"{self.reference_file}: missing columns {sorted(missing)}")
        if frame["ref"].duplicated().any():
            dup = frame["ref"][frame["ref"].duplicated()].iloc[0]
            raise StudyError(f"{self.reference_file}: ref {dup!r} is listed twice")
        frame["value"] = pd.to_numeric(frame["value"])
        return frame

    def analysis(self) -> ModuleType:
        """The study's ``analysis.py``, loaded as a module of its own."""
        path = self.directory / "analysis.py"
        spec = importlib.util.spec_from_file_location(
            f"sctpsim_study_{self.name.replace('-', '_')}", path
        )
        if spec is None or spec.loader is None:  # pragma: no cover - a file path always works
            raise StudyError(f"{path}: cannot be loaded")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def _read_study(directory: Path) -> Study:
    path = directory / "study.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise StudyError(f"{path}: {e}") from None
    for key in data:
        if key not in _STUDY_KEYS:
            raise StudyError(f"{path}: unknown key {key!r}")
    sweeps = []
    for i, entry in enumerate(data.get("sweeps", [])):
        unknown = set(entry) - set(_SWEEP_KEYS) or set(entry.get("quick", {})) - set(_QUICK_KEYS)
        if unknown:
            raise StudyError(f"{path}: sweeps[{i}]: unknown key {sorted(unknown)[0]!r}")
        sweeps.append(
            StudySweep(str(entry["name"]), directory / str(entry["file"]), entry.get("quick", {}))
        )
    try:
        return Study(
            name=directory.name,
            directory=directory,
            title=str(data["title"]),
            summary=str(data["summary"]),
            paper=str(data["paper"]),
            paper_id=str(data.get("paper_id", "")),
            sweeps=tuple(sweeps),
        )
    except KeyError as e:
        raise StudyError(f"{path}: missing key {e}") from None


def list_studies() -> list[Study]:
    """Every bundled study, by name."""
    root = studies_root()
    if not root.is_dir():
        return []
    return [
        _read_study(d)
        for d in sorted(root.iterdir())
        if d.is_dir() and _NAME.fullmatch(d.name) and (d / "study.toml").is_file()
    ]


def load_study(name: str) -> Study:
    """The bundled study ``name``.

    Raises:
        StudyError: there is no such study (the message lists the known ones).
    """
    studies = {s.name: s for s in list_studies()}
    if name in studies:
        return studies[name]
    close = difflib.get_close_matches(name, list(studies), n=1, cutoff=0.5)
    hint = f'did you mean "{close[0]}"? ' if close else ""
    known = ", ".join(studies) or "none"
    raise StudyError(f'unknown study "{name}" ({hint}known studies: {known}; see --list)')


# -------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class Estimate:
    """Our value of a quantity: the mean over replications and its 95% CI."""

    mean: float
    low: float = math.nan
    high: float = math.nan
    n: int = 1
    stdev: float = math.nan

    def scaled(self, factor: float) -> Estimate:
        """The same estimate in another unit (``factor`` times every value)."""
        return Estimate(
            self.mean * factor,
            self.low * factor,
            self.high * factor,
            self.n,
            self.stdev * abs(factor),
        )


@dataclass(frozen=True)
class Matrix:
    """The paper's own shape of a comparison table, for the report.

    The long form (one row per number, :data:`COMPARISON_COLUMNS`) is what the CSV
    holds; the report pivots it into the table the paper prints: the values of the
    ``rows`` columns run down the side (outer first: ``("PMR", "platform")`` gives an
    ns-2 and a GINE row under each PMR), the values of the ``columns`` columns across
    the top, each in the order they first appear in the long form. Each (row, column)
    must name one row of the long form. ``grid`` names the two parameters of a
    two-parameter grid (the row one, then the column one, e.g. ``("PMR", "RTO.Max
    [s]")``): the report adds a heatmap of ours and of the difference to the paper.
    """

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    grid: tuple[str, str] | None = None


@dataclass
class Comparison:
    """One table of the report: the paper's numbers beside ours.

    Attributes:
        id: file name of the CSV (``tables/<id>.csv``).
        title: heading in the report.
        frame: the label columns, then :data:`COMPARISON_COLUMNS`.
        labels: the label columns (what identifies a row besides the quantity).
        text: where we agree, where we differ and why (paragraphs separated by blank lines).
        matrix: the paper's shape of the table; ``None`` shows the long form.
    """

    id: str
    title: str
    frame: pd.DataFrame
    labels: list[str]
    text: str = ""
    matrix: Matrix | None = None


@dataclass
class Table:
    """A table of the report with no paper numbers in it (for example our own test of a
    paper's claim in a configuration the paper does not have): any columns.

    Attributes:
        id: file name of the CSV (``tables/<id>.csv``).
        title: heading in the report.
        frame: the table.
        text: the discussion under it.
    """

    id: str
    title: str
    frame: pd.DataFrame
    text: str = ""


@dataclass
class Figure:
    """A figure of the report: ``stem.png`` and ``stem.svg``, with a caption."""

    id: str
    title: str
    png: Path
    svg: Path
    caption: str = ""


def compare(
    reference: pd.DataFrame,
    labels: Sequence[str],
    ours: Callable[[pd.Series], Estimate | None],
    note: Callable[[pd.Series], str] | None = None,
    rows: Sequence[Mapping[str, Any]] = (),
) -> pd.DataFrame:
    """A comparison table: one row per reference row, in the order given.

    Args:
        reference: the rows of ``reference.csv`` this table shows.
        labels: reference columns that label a row (``platform``, ``pmr``, ...).
        ours: our estimate for a reference row, or ``None`` when we do not reproduce it.
        note: a note for a row (default: the reference's ``note`` column, if any).
        rows: extra rows without a paper value: mappings with the label columns,
            ``quantity``, ``unit``, ``estimate`` and optionally ``note``.

    ``diff`` is ours minus the paper's, ``diff_pct`` that difference in percent of the
    paper's value.
    """
    out: list[dict[str, Any]] = []
    for _, ref in reference.iterrows():
        est = ours(ref)
        paper = float(ref["value"])
        text = note(ref) if note is not None else str(ref.get("note", "") or "")
        out.append(_row({k: ref[k] for k in labels}, ref, paper, est, text))
    for extra in rows:
        est = extra.get("estimate")
        fake = pd.Series({"quantity": extra["quantity"], "unit": extra["unit"], "ref": ""})
        out.append(
            _row({k: extra.get(k, "") for k in labels}, fake, math.nan, est, extra.get("note", ""))
        )
    frame = pd.DataFrame(out, columns=[*labels, *COMPARISON_COLUMNS])
    return frame.astype({"n": "int64"})


def _row(
    label: Mapping[str, Any], ref: pd.Series, paper: float, est: Estimate | None, note: str
) -> dict[str, Any]:
    ours = est.mean if est is not None else math.nan
    diff = ours - paper
    row = dict(label)
    row.update(
        quantity=ref["quantity"],
        unit=ref["unit"],
        paper=paper,
        ours=ours,
        ci95_low=est.low if est is not None else math.nan,
        ci95_high=est.high if est is not None else math.nan,
        n=est.n if est is not None else 0,
        diff=diff,
        diff_pct=100.0 * diff / paper if paper and not math.isnan(diff) else math.nan,
        ref=ref["ref"],
        note=note,
    )
    return row


# ------------------------------------------------------------------ context


class StudyContext:
    """What a study's ``analyse(ctx)`` works with.

    Attributes:
        study: the study.
        quick: whether this is a ``--quick`` run.
        out: the output directory.
        reference: ``reference.csv`` as a DataFrame.
        outcomes: sweep name -> :class:`~sctpsim.runner.SweepOutcome`.
    """

    def __init__(self, study: Study, quick: bool, out: Path, outcomes: Mapping[str, Any]) -> None:
        self.study = study
        self.quick = quick
        self.out = out
        self.reference = study.reference()
        self.outcomes = dict(outcomes)
        self._runs: dict[str, Any] = {}

    def runs(self, sweep: str) -> pd.DataFrame:
        """The successful runs of a sweep (``runs.parquet`` rows with status ok)."""
        frame = self.outcomes[sweep].runs
        return frame[frame["status"] == "ok"]

    def estimate(self, sweep: str, metric: str, **where: Any) -> Estimate | None:
        """Mean and 95% CI of ``metric`` over the runs of ``sweep`` matching ``where``.

        ``where`` maps parameter key paths to values as the sweep file writes them
        (``**{"apps[1].sctp.rto_max": "60s"}``); ``None`` when no run has the metric.
        """
        from sctpsim.stats import confidence_interval

        runs = self.runs(sweep)
        for key, value in where.items():
            if key not in runs:
                raise KeyError(f"{sweep}: {key!r} is not a parameter of the sweep")
            runs = runs[runs[key].map(_text) == _text(value)]
        if metric not in runs or runs.empty:
            return None
        mean, stdev, low, high, n = confidence_interval(
            runs[metric].to_numpy(dtype=np.float64, na_value=np.nan)
        )
        if n == 0:
            return None
        return Estimate(mean, low, high, n, stdev)

    def run(
        self, label: str, scenario: str | os.PathLike[str], overrides: Sequence[str] = ()
    ) -> Any:
        """One simulation of a study scenario (for time-series figures), kept in
        ``runs/<label>/`` and returned as a :class:`~sctpsim.RunResult`.
        """
        if label in self._runs:
            return self._runs[label]
        from sctpsim.results import atomic_output_dir
        from sctpsim.scenario import Scenario

        path = self.study.directory / scenario
        base = Scenario(path.read_text(encoding="utf-8"), tuple(overrides), os.fspath(path))
        result = base.run()
        with atomic_output_dir(self.out / "runs" / label) as staging:
            result.to_parquet(staging)
        self._runs[label] = result
        return result

    def figure_stem(self, figure_id: str) -> Path:
        """Where a figure goes: ``figures/<id>`` (add ``.png`` and ``.svg``)."""
        return self.out / "figures" / figure_id

    def save_figure(self, fig: Any, figure_id: str) -> tuple[Path, Path]:
        """Write ``fig`` as ``figures/<id>.png`` and ``.svg``, reproducibly; returns both paths."""
        from sctpsim.plot import save_figure

        return save_figure(fig, self.figure_stem(figure_id))

    def ref(self, **where: Any) -> pd.DataFrame:
        """Reference rows whose columns equal ``where`` (values compared as text)."""
        frame = self.reference
        for key, value in where.items():
            frame = frame[frame[key].map(_text) == _text(value)]
        return frame


# ---------------------------------------------------------------- running


@dataclass
class StudyOutcome:
    """What :func:`run_study` produced."""

    study: Study
    out: Path
    quick: bool
    comparisons: list[Comparison | Table]
    figures: list[Figure]
    report: Path
    failed_runs: int = 0
    sweeps: dict[str, Any] = field(default_factory=dict)


def default_out(study: Study, quick: bool) -> Path:
    """``results/reproduce/NAME`` (``NAME-quick`` for ``--quick``)."""
    return Path("results") / "reproduce" / (study.name + ("-quick" if quick else ""))


def run_study(
    study: Study,
    out: str | os.PathLike[str] | None = None,
    *,
    quick: bool = False,
    jobs: int | None = None,
    dask: str | None = None,
    progress: Any = True,
) -> StudyOutcome:
    """Run every sweep of ``study``, analyse them and write tables, figures and the report.

    Rerunning with the same ``out`` resumes the sweeps (finished runs are reused).

    Raises:
        StudyError: a study file is wrong.
        StoreError, ExecutorError, KeyboardInterrupt: as :func:`sctpsim.run_sweep`.
    """
    from sctpsim.report import write_report
    from sctpsim.runner import run_sweep

    out = Path(out) if out is not None else default_out(study, quick)
    out.mkdir(parents=True, exist_ok=True)
    _forget_results(study, out)
    outcomes: dict[str, Any] = {}
    for entry in study.sweeps:
        sweep = entry.load(quick)
        directory = out / "sweeps" / entry.name
        outcomes[entry.name] = run_sweep(sweep, directory, jobs=jobs, dask=dask, progress=progress)
        _write_effective_sweep(entry, quick, directory / "sweep.toml")
    ctx = StudyContext(study, quick, out, outcomes)
    result = study.analysis().analyse(ctx)
    comparisons = [c for c in result if isinstance(c, (Comparison, Table))]
    figures = [f for f in result if isinstance(f, Figure)]
    tables = out / "tables"
    tables.mkdir(exist_ok=True)
    for c in comparisons:
        c.frame.to_csv(tables / f"{c.id}.csv", index=False, lineterminator="\n", na_rep="NaN")
    heatmaps = {
        c.id: grid_heatmap(c, ctx.figure_stem(f"{c.id}-heatmap"))
        for c in comparisons
        if isinstance(c, Comparison) and c.matrix is not None and c.matrix.grid is not None
    }
    failed = sum(len(o.failed) for o in outcomes.values())
    report = write_report(
        out / "report.html",
        study,
        comparisons,
        figures,
        quick=quick,
        failed_runs=failed,
        sweeps={e.name: e.load(quick) for e in study.sweeps},
        heatmaps=heatmaps,
    )
    figures.extend(heatmaps.values())
    return StudyOutcome(study, out, quick, comparisons, figures, report, failed, outcomes)


def _forget_results(study: Study, out: Path) -> None:
    """Remove what the last run of ``study`` into ``out`` concluded: the report, the tables,
    the figures and every sweep's tables (the stored runs stay, to be reused). They are
    written again only when every sweep has run, so a rerun that fails or is interrupted
    (or a --quick run into a full run's directory) never leaves them looking like its own.
    """
    from sctpsim.store import forget_tables

    with contextlib.suppress(FileNotFoundError):
        (out / "report.html").unlink()
    for pattern in ("tables/*.csv", "figures/*.png", "figures/*.svg"):
        for path in out.glob(pattern):
            path.unlink()
    for entry in study.sweeps:
        forget_tables(out / "sweeps" / entry.name)


def grid_heatmap(comparison: Comparison, stem: Path) -> Figure:
    """The heatmap of a two-parameter grid (:attr:`Matrix.grid`): ours, then ours − paper
    in percent for each further row label (each platform the paper has a row for).
    Cells without a number stay grey with ``–``. Writes ``stem.png`` and ``stem.svg``.
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    from sctpsim.plot import draw_heatmap, save_figure
    from sctpsim.report import _label

    spec = comparison.matrix
    if spec is None or spec.grid is None:
        raise ValueError(f"table {comparison.id}: no two-parameter grid")
    frame = comparison.frame.copy()
    r_key, c_key = spec.grid
    frame["_r"] = frame[r_key].map(_label)
    frame["_c"] = frame[c_key].map(_label)
    rows = list(dict.fromkeys(frame["_r"]))
    cols = list(dict.fromkeys(frame["_c"]))
    others = [k for k in (*spec.rows, *spec.columns) if k not in spec.grid]
    groups = (
        list(dict.fromkeys(frame[others].astype(str).agg(", ".join, axis=1)))
        if others
        else [""]
    )
    frame["_g"] = frame[others].astype(str).agg(", ".join, axis=1) if others else ""

    def grid(column: str, group: str | None) -> np.ndarray:
        out = np.full((len(rows), len(cols)), np.nan)
        sel = frame if group is None else frame[frame["_g"] == group]
        for _, r in sel.iterrows():
            i, j = rows.index(r["_r"]), cols.index(r["_c"])
            if math.isnan(out[i, j]):
                out[i, j] = r[column]
        return out

    unit = str(frame["unit"].iloc[0]) if len(frame) else ""
    quantity = str(frame["quantity"].iloc[0]) if len(frame) else ""
    panels = [(grid("ours", None), f"ours: {quantity} [{unit}]", False)]
    for g in groups:
        panels.append(
            (grid("diff_pct", g), f"ours − paper{' (' + g + ')' if g else ''} [%]", True)
        )
    # One colour scale for every difference panel, so that equal colours mean equal
    # differences across platforms.
    diffs = np.concatenate([v.ravel() for v, _, d in panels if d])
    diffs = diffs[~np.isnan(diffs)]
    limit = float(np.abs(diffs).max()) if diffs.size else None
    with matplotlib.rc_context({"svg.hashsalt": "sctpsim", "figure.dpi": 100}):
        fig = MplFigure(figsize=(4.2 * len(panels), 0.45 * len(rows) + 1.9))
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        for ax, (values, label, diverging) in zip(axes, panels, strict=True):
            draw_heatmap(
                ax, values, rows, cols, label=label, diverging=diverging, limit=limit or None
            )
            ax.set_xlabel(c_key)
            ax.set_ylabel(r_key)
            ax.set_title(label, fontsize=9)
        fig.tight_layout()
        png, svg = save_figure(fig, stem)
    caption = (
        "Left: our mean per cell; then, per row of the paper, ours − paper in percent of the "
        "paper's number (red: ours higher, blue: lower). Grey cells marked – have no "
        "number on one side."
    )
    title = f"{comparison.title.split(':')[0]} as heatmaps"
    return Figure(f"{comparison.id}-heatmap", title, png, svg, caption)


def _write_effective_sweep(entry: StudySweep, quick: bool, dest: Path) -> None:
    """The sweep as it ran (``--quick`` settings applied), runnable with ``sctpsim sweep``."""
    data = entry.definition(quick)
    data["scenario"] = os.fspath((entry.file.parent / str(data["scenario"])).resolve())
    header = (
        f"# {entry.file.name} of a study, as it ran{' with --quick' if quick else ''};\n"
        f"# rerun or extend it with: sctpsim sweep {dest}\n"
    )
    dest.write_text(header + _toml.dumps(data), encoding="utf-8")
