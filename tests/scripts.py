"""The repository's standalone scripts (benchmark harnesses, validation drivers), imported
by path so that their functions can be tested."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(path: Path, name: str) -> ModuleType:
    """The module of the script at ``path``, registered as ``name`` (dataclasses and pickling
    look a module up by name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
