"""Sweep definitions: read and check a sweep file, and expand it into runs.

A sweep is a base scenario, parameters to vary, a number of replications, a master
seed and the metrics to summarise. It is written in TOML (the full reference is in
``docs/sweeps.md``)::

    name = "delay-sweep"                 # optional; default: the file name
    scenario = "../two-path-cbr.toml"    # base scenario, relative to this file
    seed = 1                             # master seed (default 1)
    replications = 5                     # runs per parameter combination (default 1)
    metrics = ["flow/path1/goodput", "flow/*/loss_rate"]

    [set]                                # fixed overrides for every run
    duration = "5s"

    [grid]                               # cartesian product, first key slowest
    "links[1].delay" = ["10ms", "20ms", "40ms"]
    "links[3].loss.p" = [0.0, 0.01]

    [[zip]]                              # lists varied together (equal lengths)
    "apps[2].rate" = ["2Mbps", "4Mbps"]
    "apps[2].packet_size" = ["500B", "1000B"]

    [series]                             # time series summarised into scalars per run
    metrics = ["sctp_path/upload/path0/rto"]   # -> sctp_path/upload/path0/rto_mean, ...
    stats = ["mean", "max"]              # default: mean, min, max
    until = "sctp/sink/last_delivery_at" # optional: only samples up to this scalar (s)

Keys under ``set``, ``grid`` and ``zip`` are key paths as in ``sctpsim run --set``;
quote them (TOML reads ``links[0].delay`` unquoted as a syntax error, and
``record.interval`` as a nested table).

Every problem is a :class:`SweepError` whose message is one line naming the key path
and the value, like a scenario error: ``grid."links[1].delay"[2]: "40 sm" is not a
duration (try "40ms")``. Each value of each parameter is checked against the base
scenario before anything runs; a *combination* of individually valid values that the
scenario rejects becomes a failed run instead (it is recorded, and the sweep goes on).

Runs, seeds and identities (:meth:`Sweep.runs`):

* the combinations are the cartesian product of the grid keys (in file order) and the
  zip groups, the last varying fastest; each is repeated ``replications`` times;
* a run's seed is derived from the master seed, the run's parameter values and its
  replication index (SHA-256 of their canonical JSON), so adding a value to a list
  does not change the seeds of the other runs;
* a run's identity (``run_id``) is a hash of its fully resolved inputs: the resolved
  scenario (base file after every override, with the seed), the sctpsim version and
  the build of the simulator core (``_core.__build_id__``, a hash of the Rust sources,
  lock file and compiler it was built from). A results store reuses a run only when
  this identity matches, so editing the base scenario or the sweep file, or changing
  the engine, never silently reuses old results.
"""

from __future__ import annotations

import datetime
import difflib
import hashlib
import itertools
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sctpsim import _core, _toml
from sctpsim._core import ScenarioError
from sctpsim.scenario import Scenario

__all__ = [
    "RESERVED_COLUMNS",
    "SERIES_STATS",
    "RunSpec",
    "SeriesSummary",
    "Sweep",
    "SweepError",
    "derive_seed",
    "load_sweep",
]

MAX_SEED = 2**63 - 1
MAX_REPLICATIONS = 1_000_000

#: Column names of the results store that are not parameters or scalars.
RESERVED_COLUMNS: tuple[str, ...] = ("run", "run_id", "replication", "seed", "status", "error")

_KEY_PATH = re.compile(
    r"[A-Za-z_][A-Za-z0-9_-]*(\[[0-9]+\])*(\.[A-Za-z_][A-Za-z0-9_-]*(\[[0-9]+\])*)*"
)
_TOP_KEYS = ("name", "scenario", "seed", "replications", "metrics", "set", "grid", "zip", "series")

#: Statistics ``[series]`` can derive from a time series, in this order.
SERIES_STATS: tuple[str, ...] = (
    "count",
    "start",
    "end",
    "max",
    "mean",
    "min",
    "stdev",
    "variance",
)
_SERIES_KEYS = ("metrics", "stats", "until")


class SweepError(ValueError):
    """An invalid sweep: ``str(e)`` is one line, ``KEY: what is wrong``.

    Attributes:
        key: key path in the sweep file (``grid."links[0].delay"[1]``), or ``""``
            for whole-file problems such as TOML syntax.
        reason: the message without the key path.
    """

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}" if key else reason)
        self.key = key
        self.reason = reason


# ------------------------------------------------------------------ helpers


def _quote(value: Any) -> str:
    """A value as the sweep file would write it (for messages)."""
    try:
        return _toml.literal(value)
    except TypeError:
        return repr(value)


def _no_scenario_value(value: Any) -> str:
    """Why ``value`` (of a sweep file or a Python caller) cannot be a scenario value."""
    if isinstance(value, (datetime.date, datetime.time)):
        return f"{value.isoformat()} is a date or time, which no scenario key takes"
    return f"{value!r} ({type(value).__name__}) is not a TOML value"


def _path(*parts: str | int) -> str:
    """Join key path parts: ``_path("grid", "links[0].delay", 2)`` -> ``grid."links[0].delay"[2]``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not out:
            out = part  # a section of the sweep file ("grid", "zip[0]"): already a path
        else:
            out += "." + _toml.key(part)
    return out


def _suggest(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def canonical_json(value: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces): the input of every hash here."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def derive_seed(master_seed: int, parameters: Mapping[str, Any], replication: int) -> int:
    """The seed of one run: 63 bits of SHA-256 over the master seed, the run's parameter
    values (by key path) and its replication index.

    Independent of parameter order and of the other runs in the sweep; not Python's
    ``hash()``, so it is the same on every machine and in every process.
    """
    payload = canonical_json(
        {"seed": master_seed, "parameters": dict(parameters), "replication": replication}
    )
    digest = hashlib.sha256(payload.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def _run_id(
    resolved: str | None,
    base: str,
    overrides: Sequence[str],
    seed: int,
    series: SeriesSummary | None = None,
) -> str:
    """Identity of a run: a hash of everything that determines its results.

    The ``[series]`` summary changes which scalars a run stores, so it is part of the
    identity, but only when present: sweeps without one keep their identities.
    """
    inputs: dict[str, Any] = {
        "version": _core.__version__,
        "build": _core.__build_id__,
        "seed": seed,
    }
    if series is not None:
        inputs["series"] = series.to_dict()
    if resolved is not None:
        inputs["scenario"] = resolved
    else:  # invalid combination: identify it by what it was built from
        inputs["base"] = base
        inputs["overrides"] = list(overrides)
    return hashlib.sha256(canonical_json(inputs).encode("utf-8")).hexdigest()[:20]


# --------------------------------------------------------------------- model


@dataclass(frozen=True)
class SeriesSummary:
    """The ``[series]`` section: time series turned into scalars in every run.

    For each time series whose ``kind/entity/metric`` name matches one of
    ``metrics`` (exact names or globs), each statistic in ``stats`` becomes a scalar
    named ``kind/entity/metric_<stat>`` (``sctp_path/upload/path0/rto_mean``). The
    samples are those the run recorded every ``record.interval``; with ``until``, only
    those at or before the value (in seconds) of that scalar in the same run (all of
    them when the run lacks it).

    Attributes:
        metrics: time-series names or glob patterns.
        stats: statistics from :data:`SERIES_STATS`.
        until: a scalar name, or ``None``.
    """

    metrics: tuple[str, ...]
    stats: tuple[str, ...] = ("mean", "min", "max")
    until: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what a worker receives, and what the run identity hashes)."""
        return {"metrics": list(self.metrics), "stats": list(self.stats), "until": self.until}


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep.

    Attributes:
        index: position in the sweep's run order (0-based).
        point: index of its parameter combination.
        parameters: key path -> value, in the sweep's parameter order.
        replication: 0-based replication index.
        seed: the derived seed.
        overrides: every ``KEY=VALUE`` override (the sweep's ``set``, then the
            parameters) applied to the base scenario text.
        run_id: identity of the run's resolved inputs (see the module docs).
        error: why the scenario rejects this combination, or ``None`` when it is
            valid; such a run is recorded as failed without being simulated.
    """

    index: int
    point: int
    parameters: dict[str, Any]
    replication: int
    seed: int
    overrides: tuple[str, ...]
    run_id: str
    error: str | None = None


@dataclass(frozen=True)
class Sweep:
    """A checked sweep definition; build it with :func:`load_sweep` or :meth:`from_dict`.

    Attributes:
        name: the sweep's name (default output directory ``results/<name>``).
        scenario: the base scenario with the ``set`` overrides applied.
        grid: key path -> values, combined as a cartesian product.
        zip: groups of key path -> values; the lists of a group vary together.
        replications: runs per parameter combination.
        seed: master seed.
        metrics: scalar names or glob patterns (``flow/*/goodput``) to summarise.
        source: the sweep file, when there is one.
        series: time series to summarise into scalars in every run, or ``None``.
    """

    name: str
    scenario: Scenario
    grid: dict[str, list[Any]] = field(default_factory=dict)
    zip: list[dict[str, list[Any]]] = field(default_factory=list)
    replications: int = 1
    seed: int = 1
    metrics: tuple[str, ...] = ()
    source: str | None = None
    series: SeriesSummary | None = None

    # -------------------------------------------------------------- reading

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Sweep:
        """Read and check a sweep file (see :func:`load_sweep`)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SweepError("", "no such file") from None
        except IsADirectoryError:
            raise SweepError("", "is a directory, expected a sweep TOML file") from None
        except UnicodeDecodeError as e:
            raise SweepError("", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
        except OSError as e:
            raise SweepError("", f"cannot read: {e.strerror or e}") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SweepError("", _toml_syntax_message(e)) from None
        data.setdefault("name", path.stem.removesuffix(".sweep"))
        return cls.from_dict(data, base_dir=path.parent, source=os.fspath(path))

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        base_dir: str | os.PathLike[str] | None = None,
        source: str | None = None,
    ) -> Sweep:
        """Check a sweep given as Python data shaped like the TOML file.

        ``data["scenario"]`` is a file path (relative to ``base_dir``, default the
        current directory) or a :class:`Scenario`. ``name`` defaults to the
        scenario's name.

        Raises:
            SweepError: anything wrong, with the key path of the offending key.
        """
        return _Reader(data, Path(base_dir) if base_dir is not None else Path(), source).read()

    # ------------------------------------------------------------ expansion

    @property
    def parameters(self) -> list[str]:
        """The varied key paths: grid keys in order, then each zip group's keys."""
        return [*self.grid, *(k for group in self.zip for k in group)]

    def points(self) -> list[dict[str, Any]]:
        """Every parameter combination, in run order (the last axis varies fastest)."""
        return _expand(self.grid, self.zip)

    def runs(self) -> list[RunSpec]:
        """Every run: each combination, ``replications`` times (replication fastest).

        Each run's inputs are resolved by the core here (cheap; nothing is
        simulated), which gives its identity and catches invalid combinations.
        """
        specs: list[RunSpec] = []
        base = self.scenario
        for point, params in enumerate(self.points()):
            param_overrides = tuple(f"{k}={_toml.literal(v)}" for k, v in params.items())
            overrides = base.overrides + param_overrides
            for rep in range(self.replications):
                seed = derive_seed(self.seed, params, rep)
                error: str | None = None
                try:
                    resolved: str | None = _core.check(base.text, [*overrides, f"seed={seed}"])
                except ScenarioError as e:
                    resolved, error = None, f"invalid scenario: {_one_line(str(e))}"
                specs.append(
                    RunSpec(
                        index=len(specs),
                        point=point,
                        parameters=params,
                        replication=rep,
                        seed=seed,
                        overrides=overrides,
                        run_id=_run_id(resolved, base.text, overrides, seed, self.series),
                        error=error,
                    )
                )
        return specs


def _expand(
    grid: Mapping[str, Sequence[Any]], groups: Sequence[Mapping[str, Sequence[Any]]]
) -> list[dict[str, Any]]:
    """The cartesian product of the grid keys and the zip groups, last axis fastest."""
    axes: list[list[dict[str, Any]]] = [[{key: v} for v in values] for key, values in grid.items()]
    for group in groups:
        keys = list(group)
        axes.append(
            [dict(zip(keys, row, strict=True)) for row in zip(*group.values(), strict=True)]
        )
    return [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*axes)]


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read and check the sweep file ``path``.

    Raises:
        SweepError: the file or the scenario it names is unreadable or invalid; the
            message is one line with the key path in the sweep file.
    """
    return Sweep.from_file(path)


def _count(n: int) -> str:
    return f"{n} value" if n == 1 else f"{n} values"


def _one_line(message: str) -> str:
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _toml_syntax_message(e: tomllib.TOMLDecodeError) -> str:
    """``line L, column C: TOML syntax error: MSG``, the scenario files' format."""
    msg = str(e)
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", msg)
    if m is None:
        return f"TOML syntax error: {_one_line(msg)}"
    text = msg[: m.start()].strip()
    text = text[:1].lower() + text[1:]
    return f"line {m.group(1)}, column {m.group(2)}: TOML syntax error: {text}"


# -------------------------------------------------------------------- reader


class _Reader:
    """Checks sweep data top-down; the first problem raises :class:`SweepError`."""

    def __init__(self, data: Mapping[str, Any], base_dir: Path, source: str | None) -> None:
        self.data = data
        self.base_dir = base_dir
        self.source = source

    def read(self) -> Sweep:
        data = self.data
        for key in data:
            if key not in _TOP_KEYS:
                raise SweepError(_path(str(key)), "unknown key" + _suggest(str(key), _TOP_KEYS))
        base = self._scenario()
        overrides = self._set(base)
        scenario = base.with_overrides(overrides)
        grid = self._grid()
        groups = self._zip(grid)
        self._check_values(scenario, grid, groups)
        metrics = self._metrics()
        series = self._series()
        seed = self._int("seed", 1, 0, MAX_SEED)
        replications = self._int("replications", 1, 1, MAX_REPLICATIONS)
        name = data.get("name")
        if name is None:
            try:
                name = scenario.name or "sweep"
            except ScenarioError:  # pragma: no cover - checked above
                name = "sweep"
        if not isinstance(name, str) or not name.strip():
            raise SweepError("name", f"{_quote(name)} is not a name (expected a non-empty string)")
        return Sweep(
            name=name,
            scenario=scenario,
            grid=grid,
            zip=[values for _, values in groups],
            replications=replications,
            seed=seed,
            metrics=metrics,
            source=self.source,
            series=series,
        )

    # ---------------------------------------------------------------- parts

    def _scenario(self) -> Scenario:
        value = self.data.get("scenario")
        if value is None:
            raise SweepError(
                "scenario", 'missing (expected the base scenario file, e.g. scenario = "base.toml")'
            )
        if isinstance(value, Scenario):
            scenario = value
            label = value.source or "the scenario"
        elif isinstance(value, (str, os.PathLike)) and os.fspath(value).strip():
            label = _quote(os.fspath(value))
            path = self.base_dir / os.fspath(value)
            try:
                scenario = Scenario.from_file(path)
            except FileNotFoundError:
                raise SweepError("scenario", f"{label}: no such file") from None
            except IsADirectoryError:
                raise SweepError(
                    "scenario", f"{label}: is a directory, expected a scenario TOML file"
                ) from None
            except UnicodeDecodeError as e:
                raise SweepError(
                    "scenario", f"{label}: not UTF-8 text ({e.reason} at byte {e.start})"
                ) from None
            except OSError as e:
                raise SweepError("scenario", f"{label}: cannot read: {e.strerror or e}") from None
        else:
            raise SweepError(
                "scenario",
                f'{_quote(value)} is not a file name (expected a string such as "base.toml")',
            )
        try:
            scenario.resolved()
        except ScenarioError as e:
            raise SweepError("scenario", f"{label}: {_one_line(str(e))}") from None
        return scenario

    def _table(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key, {})
        if not isinstance(value, Mapping):
            raise SweepError(key, f"{_quote(value)} is not a table (write it as [{key}])")
        return value

    def _key_path(self, where: str, key: str) -> None:
        if not _KEY_PATH.fullmatch(key):
            raise SweepError(_path(where, key), 'not a key path (e.g. "links[0].delay")')
        if key == "seed":
            raise SweepError(
                _path(where, key),
                "runs get their seeds from the sweep's seed and replications; "
                "set seed and replications at the top of the sweep file instead",
            )

    def _set(self, base: Scenario) -> dict[str, Any]:
        table = self._table("set")
        for key in table:
            self._key_path("set", key)
        if not table:
            return {}
        try:
            base.with_overrides(table).resolved()
        except ScenarioError as e:
            raise self._attribute(e, {k: _path("set", k) for k in table}, "set") from None
        return dict(table)

    def _values(self, where: str, key: str, values: Any) -> list[Any]:
        self._key_path(where, key)
        loc = _path(where, key)
        if isinstance(values, Mapping):
            raise SweepError(
                loc,
                "is a table, not a list of values (quote key paths that contain dots or "
                'brackets, e.g. "links[0].delay" = ["10ms", "20ms"])',
            )
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise SweepError(
                loc,
                f"{_quote(values)} is not a list (write the values to try as a list, e.g. [{_quote(values)}])",
            )
        if not values:
            raise SweepError(loc, "[] is empty (expected at least one value)")
        seen: set[str] = set()
        for i, v in enumerate(values):
            try:
                text = _toml.literal(v)
            except TypeError:
                raise SweepError(_path(where, key, i), _no_scenario_value(v)) from None
            if text in seen and where == "grid":
                raise SweepError(_path(where, key, i), f"{text} is listed twice")
            seen.add(text)
        return [_toml.plain(v) for v in values]

    def _grid(self) -> dict[str, list[Any]]:
        table = self._table("grid")
        return {key: self._values("grid", key, values) for key, values in table.items()}

    def _zip(self, grid: Mapping[str, Any]) -> list[tuple[str, dict[str, list[Any]]]]:
        raw = self.data.get("zip", [])
        if isinstance(raw, Mapping):
            tables: list[tuple[str, Mapping[str, Any]]] = [("zip", raw)]
        elif isinstance(raw, Sequence) and not isinstance(raw, (str, bytes)):
            tables = []
            for i, t in enumerate(raw):
                if not isinstance(t, Mapping):
                    raise SweepError(
                        _path("zip", i), f"{_quote(t)} is not a table (write groups as [[zip]])"
                    )
                tables.append((_path("zip", i), t))
        else:
            raise SweepError("zip", f"{_quote(raw)} is not a table (write groups as [[zip]])")
        seen = {k: "grid" for k in grid}
        groups: list[tuple[str, dict[str, list[Any]]]] = []
        for where, table in tables:
            if not table:
                raise SweepError(where, "is empty (expected key paths with lists of values)")
            group: dict[str, list[Any]] = {}
            first: str | None = None
            for key, values in table.items():
                group[key] = self._values(where, key, values)
                if key in seen:
                    raise SweepError(
                        _path(where, key),
                        f"also varied in {seen[key]} (vary each key in one place)",
                    )
                seen[key] = where
                if first is None:
                    first = key
                elif len(group[key]) != len(group[first]):
                    raise SweepError(
                        _path(where, key),
                        f"{_count(len(group[key]))}, but {_path(where, first)} has "
                        f"{_count(len(group[first]))} (zipped lists must have equal lengths)",
                    )
            rows = [
                tuple(_toml.literal(v) for v in row) for row in zip(*group.values(), strict=True)
            ]
            for i, row in enumerate(rows):
                if row in rows[:i]:
                    raise SweepError(
                        _path(where, first or "", i),
                        f"the values at position {i} repeat those at position {rows.index(row)}",
                    )
            groups.append((where, group))
        return groups

    def _check_values(
        self,
        scenario: Scenario,
        grid: Mapping[str, list[Any]],
        groups: Sequence[tuple[str, Mapping[str, list[Any]]]],
    ) -> None:
        """Reject values that cannot work: invalid on their own on top of the base
        scenario, and in every combination of the sweep that contains them.

        A value valid only together with other values of the sweep (a stop time
        after a start time that is itself varied) passes; combinations that are
        invalid become failed runs.
        """
        points: list[dict[str, Any]] | None = None
        valid: list[bool] = []
        for where, table in [("grid", grid), *groups]:
            for key, values in table.items():
                for i, value in enumerate(values):
                    try:
                        scenario.set(key, value).resolved()
                        continue
                    except ScenarioError as e:
                        error = e
                    if points is None:
                        points = _expand(grid, [g for _, g in groups])
                        valid = [self._valid(scenario, p) for p in points]
                    literal = _toml.literal(value)
                    if not any(
                        ok and _toml.literal(p[key]) == literal
                        for p, ok in zip(points, valid, strict=True)
                    ):
                        raise self._attribute(error, {key: _path(where, key, i)}, where) from None

    @staticmethod
    def _valid(scenario: Scenario, point: Mapping[str, Any]) -> bool:
        try:
            scenario.with_overrides(point).resolved()
        except ScenarioError:
            return False
        return True

    def _attribute(
        self, e: ScenarioError, locations: Mapping[str, str], fallback: str
    ) -> SweepError:
        """Turn a core error into a sweep error located at the override that caused it."""
        err_key: str = getattr(e, "key", "") or ""
        reason: str = _one_line(getattr(e, "reason", "") or str(e))
        if err_key.startswith("--set "):
            # The override itself is malformed (e.g. an index out of range).
            assigned = err_key.removeprefix("--set ").split("=", 1)[0]
            if assigned in locations:
                return SweepError(locations[assigned], reason)
        for key in sorted(locations, key=len, reverse=True):
            if err_key == key:
                return SweepError(locations[key], reason)
            if err_key.startswith((key + ".", key + "[")) or key.startswith(
                (err_key + ".", err_key + "[")
            ):
                # Inside the value the override sets, or on a key of its path.
                return SweepError(locations[key], _one_line(str(e)))
        if len(locations) == 1:
            # One override on a valid scenario: it is the cause, wherever the error shows.
            return SweepError(next(iter(locations.values())), _one_line(str(e)))
        return SweepError(fallback, _one_line(str(e)))

    def _metrics(self) -> tuple[str, ...]:
        return tuple(self._names("metrics", self.data.get("metrics"), "scalar"))

    @staticmethod
    def _names(key: str, value: Any, what: str) -> list[str]:
        """A list of ``KIND/ENTITY/METRIC`` names or globs (``metrics``, ``series.metrics``)."""
        example = (
            '["flow/path1/goodput", "flow/*/loss_rate"]'
            if what == "scalar"
            else '["sctp_path/upload/path0/rto"]'
        )
        if value is None:
            raise SweepError(key, f"missing (expected a list of {what} names, e.g. {example})")
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise SweepError(key, f"{_quote(value)} is not a list (e.g. {example})")
        if not value:
            raise SweepError(
                key, f"[] is empty (expected at least one {what} name, e.g. {example})"
            )
        out: list[str] = []
        for i, m in enumerate(value):
            loc = f"{key}[{i}]"
            if not isinstance(m, str):
                raise SweepError(loc, f"{_quote(m)} is not a {what} name (expected a string)")
            parts = m.split("/")
            if len(parts) < 3 or not all(parts):
                raise SweepError(
                    loc, f'{_quote(m)} is not KIND/ENTITY/METRIC (e.g. "flow/path1/goodput")'
                )
            if m in out:
                raise SweepError(loc, f"{_quote(m)} is listed twice")
            out.append(m)
        return out

    def _series(self) -> SeriesSummary | None:
        table = self.data.get("series")
        if table is None:
            return None
        if not isinstance(table, Mapping):
            raise SweepError("series", f"{_quote(table)} is not a table (write it as [series])")
        for key in table:
            if key not in _SERIES_KEYS:
                raise SweepError(
                    _path("series", str(key)), "unknown key" + _suggest(str(key), _SERIES_KEYS)
                )
        metrics = self._names("series.metrics", table.get("metrics"), "time series")
        stats_value = table.get("stats", ["mean", "min", "max"])
        if isinstance(stats_value, str) or not isinstance(stats_value, Sequence) or not stats_value:
            raise SweepError(
                "series.stats",
                f"{_quote(stats_value)} is not a non-empty list "
                f"(choose from {', '.join(SERIES_STATS)})",
            )
        stats: list[str] = []
        for i, st in enumerate(stats_value):
            loc = f"series.stats[{i}]"
            if st not in SERIES_STATS:
                raise SweepError(
                    loc,
                    f"{_quote(st)} is not a statistic (choose from {', '.join(SERIES_STATS)})"
                    + (_suggest(st, SERIES_STATS) if isinstance(st, str) else ""),
                )
            if st in stats:
                raise SweepError(loc, f"{_quote(st)} is listed twice")
            stats.append(st)
        until = table.get("until")
        if until is not None:
            parts = until.split("/") if isinstance(until, str) else []
            if len(parts) < 3 or not all(parts):
                raise SweepError(
                    "series.until",
                    f"{_quote(until)} is not KIND/ENTITY/METRIC "
                    '(e.g. "sctp/sink/last_delivery_at")',
                )
        return SeriesSummary(tuple(metrics), tuple(stats), until)

    def _int(self, key: str, default: int, lo: int, hi: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise SweepError(key, f"{_quote(value)} is not an integer")
        if not lo <= value <= hi:
            raise SweepError(
                key, f"{value} is out of range (expected an integer from {lo} to {hi})"
            )
        return value
