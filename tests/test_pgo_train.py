"""The training set of `tools/pgo-install` stays runnable as scenarios and examples change."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sctpsim import Scenario

ROOT = Path(__file__).resolve().parent.parent


def _train_module():
    spec = importlib.util.spec_from_file_location("pgo_train", ROOT / "tools" / "pgo_train.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_training_run_is_a_valid_scenario_with_its_overrides():
    runs = _train_module().RUNS
    # Every example is part of it, and the studies' heavy models are.
    examples = sorted((ROOT / "examples").glob("*.toml"))
    assert [p for p, _ in runs[: len(examples)]] == examples
    names = {p.name for p, _ in runs}
    assert {"scenario-a.toml", "scenario-b.toml", "wifi-lte.toml", "tcp-dumbbell-30.toml"} <= names
    for path, overrides in runs:
        Scenario.from_file(path, overrides).validate()
