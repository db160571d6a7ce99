"""External programs some tests use, found on PATH or the test skipped (failed in CI, whose
`.ci/run` installs them)."""

from __future__ import annotations

import os
import shutil

import pytest


def tshark_or_skip() -> str:
    """The path of tshark."""
    found = shutil.which("tshark")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("tshark is required in CI (.ci/run installs it)")
        pytest.skip("tshark not installed")
    return found
