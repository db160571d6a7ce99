"""A small TOML writer for the values scenarios and sweeps use.

Two jobs: :func:`literal` writes one value as a TOML literal (for ``KEY=VALUE``
overrides and for error messages, which quote values the way the scenario file would
write them), and :func:`dumps` writes a whole document (for
:meth:`sctpsim.Scenario.from_dict`). Only what TOML can hold is accepted: strings,
booleans, integers, floats, lists and string-keyed mappings. Output is deterministic.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["dumps", "key", "literal", "plain"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def key(name: str) -> str:
    """A TOML key: bare when possible (``delay``), quoted otherwise (``"links[0].delay"``)."""
    return name if _BARE_KEY.fullmatch(name) else _string(name)


def plain(value: Any) -> Any:
    """``value`` with every number a plain ``bool``, ``int`` or ``float``, through lists
    and mappings: ``np.float64(0.01)`` -> ``0.01``, ``np.int64(10)`` -> ``10``,
    ``np.bool_(True)`` -> ``True``. Numbers of other types are converted when that
    loses nothing; anything else is returned as it is.

    numpy is not imported: its scalars give their Python value through ``item()``.
    """
    if isinstance(value, (str, bytes, bytearray)):
        return value
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [plain(v) for v in value]
    if type(value) in (bool, int, float):
        return value
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        with contextlib.suppress(TypeError, ValueError):
            value = item()
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, (int, float)):
        return int(value) if isinstance(value, int) else float(value)
    for kind in (int, float):
        try:
            converted = kind(value)
        except (TypeError, ValueError):
            continue
        if converted == value:
            return converted
    return value


def literal(value: Any) -> str:
    """``value`` as a one-line TOML literal: ``"20ms"``, ``0.01``, ``{ model = "bernoulli", p = 0.01 }``.

    Raises:
        TypeError: the value has no TOML form (``None``, a date, an object, ...).
    """
    value = plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{key(_check_key(k))} = {literal(v)}" for k, v in value.items())
        return f"{{ {items} }}" if items else "{}"
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    raise TypeError(f"{value!r} ({type(value).__name__}) has no TOML form")


def _check_key(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"TOML keys are strings, not {name!r}")
    return name


def _is_table_list(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes, bytearray))
        and len(value) > 0
        and all(isinstance(v, Mapping) for v in value)
    )


def dumps(document: Mapping[str, Any]) -> str:
    """Write ``document`` as TOML text.

    Top-level mappings become ``[tables]``, top-level lists of mappings become
    ``[[arrays of tables]]``; anything deeper is written inline.

    Raises:
        TypeError: a key is not a string or a value has no TOML form.
    """
    lines: list[str] = []
    tables: list[str] = []
    for name, value in document.items():
        k = key(_check_key(name))
        if isinstance(value, Mapping):
            tables.append(f"\n[{k}]")
            tables.extend(f"{key(_check_key(n))} = {literal(v)}" for n, v in value.items())
        elif _is_table_list(value):
            for entry in value:
                tables.append(f"\n[[{k}]]")
                tables.extend(f"{key(_check_key(n))} = {literal(v)}" for n, v in entry.items())
        else:
            lines.append(f"{k} = {literal(value)}")
    return "\n".join(lines + tables).lstrip("\n") + "\n"
