"""Downsampling for plots: the min/max envelope per pixel column.

A figure of a long run must not hand matplotlib millions of points: drawing them is
slow, the files grow, and nothing more can be seen than one pixel column shows. For each
pixel column of the x range, :func:`envelope` keeps the sample with the smallest and the
one with the largest y (in their time order, so a line through them goes where the data
went), so every spike and every dip stays visible: the drawn line covers exactly the
pixels the full line would. At most two points per column are kept; data with fewer
points than that is returned unchanged.
"""

from __future__ import annotations

import numpy as np

__all__ = ["envelope", "max_points"]


def max_points(columns: int) -> int:
    """The most points :func:`envelope` returns for ``columns`` pixel columns."""
    return 2 * max(1, int(columns))


def envelope(
    x: np.ndarray,
    y: np.ndarray,
    columns: int,
    x_range: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The min/max envelope of ``(x, y)`` over ``columns`` pixel columns.

    Args:
        x: sample positions, sorted ascending (times).
        y: sample values; NaN samples are dropped.
        columns: pixel columns the x range is drawn on (at least 1).
        x_range: the x interval the columns divide (default: that of ``x``); samples
            outside it fall into the first or last column.

    Returns:
        ``(x, y)`` with at most ``2 * columns`` points: per column its minimum and its
        maximum sample, in x order (one point when they are the same sample). The
        global minimum and maximum are always among them.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-d of one length (got {x.shape} and {y.shape})")
    keep = ~np.isnan(y)
    if not keep.all():
        x, y = x[keep], y[keep]
    columns = max(1, int(columns))
    if len(x) <= max_points(columns):
        return x, y
    lo, hi = (float(x[0]), float(x[-1])) if x_range is None else map(float, x_range)
    span = hi - lo
    if span <= 0:
        column = np.zeros(len(x), dtype=np.int64)
    else:
        column = np.clip(((x - lo) / span * columns).astype(np.int64), 0, columns - 1)
    # Sort by (column, y): each column's run starts at its minimum and ends at its maximum.
    # x is sorted, so the columns are already in order; a stable sort keeps ties in time order.
    order = np.lexsort((y, column))
    col_sorted = column[order]
    starts = np.flatnonzero(np.r_[True, col_sorted[1:] != col_sorted[:-1]])
    ends = np.r_[starts[1:], len(order)] - 1
    picked = np.unique(np.concatenate([order[starts], order[ends]]))  # sorted = time order
    return x[picked], y[picked]
