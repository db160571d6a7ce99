"""Scenarios as Python values: load, build from a dict, override keys, run.

A :class:`Scenario` is immutable: scenario TOML text plus an ordered list of
``KEY=VALUE`` overrides, exactly what ``sctpsim run FILE --set KEY=VALUE`` takes.
Validation happens in the core, so a scenario built in Python gets the same checks
and the same one-line error messages (naming the key path) as a file does.

Example::

    import sctpsim

    base = sctpsim.load_scenario("examples/two-path-cbr.toml")
    fast = base.with_overrides({"duration": "5s", "links[0].delay": "1ms"})
    result = sctpsim.run(fast, seed=3)
    result.scalars["flow/path1/goodput"]
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sctpsim import _core, _toml
from sctpsim.results import RunResult

__all__ = ["Scenario", "ScenarioLike", "load_scenario", "run"]


def _override_strings(overrides: Mapping[str, Any] | Iterable[str] | None) -> tuple[str, ...]:
    """Normalise overrides: a mapping of key path -> Python value, or ``KEY=VALUE`` strings."""
    if overrides is None:
        return ()
    if isinstance(overrides, Mapping):
        return tuple(f"{k}={_toml.literal(v)}" for k, v in overrides.items())
    if isinstance(overrides, str):
        raise TypeError(
            "overrides: expected a mapping or a list of KEY=VALUE strings, not a string"
        )
    out = tuple(overrides)
    for item in out:
        if not isinstance(item, str) or "=" not in item:
            raise TypeError(f"override {item!r} is not a KEY=VALUE string")
    return out


@dataclass(frozen=True)
class Scenario:
    """A scenario: TOML text plus ``KEY=VALUE`` overrides applied on top of it.

    Build one with :func:`load_scenario`, :meth:`from_dict` or :meth:`from_toml`;
    derive variants with :meth:`with_overrides` (the original is unchanged).

    Attributes:
        text: the scenario TOML text.
        overrides: ``KEY=VALUE`` strings, applied in order before validation.
        source: where the text came from (a file path), for messages; may be ``None``.
    """

    text: str
    overrides: tuple[str, ...] = ()
    source: str | None = None

    # ------------------------------------------------------------ constructors

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        overrides: Mapping[str, Any] | Iterable[str] | None = None,
    ) -> Scenario:
        """Read a scenario file (see :func:`load_scenario`)."""
        text = Path(path).read_text(encoding="utf-8")
        return cls(text, _override_strings(overrides), os.fspath(path))

    @classmethod
    def from_toml(
        cls, text: str, overrides: Mapping[str, Any] | Iterable[str] | None = None
    ) -> Scenario:
        """A scenario from TOML text."""
        return cls(text, _override_strings(overrides))

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        overrides: Mapping[str, Any] | Iterable[str] | None = None,
    ) -> Scenario:
        """A scenario from nested Python data shaped like the TOML file.

        Example::

            Scenario.from_dict({
                "name": "pair", "duration": "2s",
                "nodes": [{"name": "A", "interfaces": [{"address": "10.0.0.1"}]},
                          {"name": "B", "interfaces": [{"address": "10.0.0.2"}]}],
                "links": [{"ends": ["A/eth0", "B/eth0"], "delay": "5ms"}],
            })

        Raises:
            TypeError: a key is not a string or a value has no TOML form.
        """
        return cls(_toml.dumps(data), _override_strings(overrides))

    # ------------------------------------------------------------- variants

    def with_overrides(self, overrides: Mapping[str, Any] | Iterable[str]) -> Scenario:
        """A copy with more overrides, e.g. ``{"links[0].delay": "20ms", "duration": "5s"}``.

        Keys are key paths as in ``sctpsim run --set`` (``links[0].loss.p``); values
        are Python values (``"20ms"``, ``0.01``, ``{"model": "bernoulli", "p": 0.01}``)
        or, in the list form, ``KEY=VALUE`` strings. Nothing is validated until the
        scenario is resolved or run.
        """
        return Scenario(self.text, self.overrides + _override_strings(overrides), self.source)

    def set(self, key: str, value: Any) -> Scenario:
        """A copy with one key overridden: ``scenario.set("duration", "30s")``."""
        return self.with_overrides({key: value})

    # ----------------------------------------------------------- inspection

    def resolved(self) -> str:
        """Validate and return the resolved scenario TOML (every default filled in).

        Raises:
            ScenarioError: invalid scenario or override; ``e.key`` is the key path.
        """
        return _core.check(self.text, list(self.overrides))

    def validate(self) -> Scenario:
        """Validate and return ``self`` (raises :class:`ScenarioError` when invalid)."""
        self.resolved()
        return self

    def to_dict(self) -> dict[str, Any]:
        """The resolved scenario as nested Python data (validates first)."""
        return tomllib.loads(self.resolved())

    @property
    def name(self) -> str:
        """The scenario's ``name`` (validates first)."""
        return str(self.to_dict().get("name", ""))

    def run(
        self,
        seed: int | None = None,
        capture_dir: str | os.PathLike[str] | None = None,
    ) -> RunResult:
        """Simulate this scenario; see :func:`sctpsim.run`."""
        capture: str | None = None
        if capture_dir is not None:
            Path(capture_dir).mkdir(parents=True, exist_ok=True)
            capture = os.fspath(capture_dir)
        return RunResult(_core.run(self.text, list(self.overrides), seed, capture))


#: What :func:`run` accepts as a scenario.
ScenarioLike = Scenario | str | os.PathLike[str] | Mapping[str, Any]


def load_scenario(
    path: str | os.PathLike[str],
    overrides: Mapping[str, Any] | Iterable[str] | None = None,
) -> Scenario:
    """Read the scenario file ``path``, optionally with overrides by key path.

    Raises:
        OSError: the file cannot be read.
    """
    return Scenario.from_file(path, overrides)


def _as_scenario(scenario: ScenarioLike) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.from_file(scenario)
    raise TypeError(
        f"expected a Scenario, a scenario file path or a dict, not {type(scenario).__name__}"
    )


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    *,
    overrides: Mapping[str, Any] | Iterable[str] | None = None,
    capture_dir: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Simulate a scenario and return its results.

    The GIL is released while the core simulates, so several runs can proceed in
    threads.

    Args:
        scenario: a :class:`Scenario`, a scenario file path, or a dict shaped like
            the TOML file.
        seed: master RNG seed; ``None`` uses the scenario's ``seed`` key (the seed
            used is ``result.seed``).
        overrides: more overrides by key path, e.g. ``{"duration": "5s"}``.
        capture_dir: directory for the pcap files the scenario asks for; ``None``
            writes none.

    Raises:
        ScenarioError: the scenario or an override is invalid; ``e.key`` is the key
            path (``""`` for TOML syntax errors) and ``e.reason`` what is wrong.
        SimulationError: the run failed.
        OSError: a scenario file cannot be read.
    """
    s = _as_scenario(scenario)
    if overrides is not None:
        s = s.with_overrides(overrides)
    return s.run(seed, capture_dir)
