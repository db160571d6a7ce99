"""One run, looked at: the figures of the failover example from Python, notebook style.

``examples/failover.toml`` uploads from A to B over the primary path until its last link
breaks at t = 10 s; the sender backs its retransmission timer off (1, 2, 4, 8, 16, 32 s),
marks the primary inactive and moves new data to the other path. Each figure below shows
a part of that story:

* ``result.paths()``: cwnd, ssthresh and flight size, SRTT and RTO, and the state of each
  path, with the fault and the T3 expiries, the inactive mark and the failover drawn as
  labelled lines;
* ``result.sequence()``: the time-sequence graph (TSN against time, a colour per path,
  retransmissions as crosses, the SACKs' cumulative TSN ack), from the packet log that
  ``record.packets = true`` keeps;
* ``result.flows()``: goodput per flow over time; ``result.queues()``: queue occupancy;
* ``sctpsim.write_run_report``: all of it, and the summary tables, as one HTML page
  (what ``sctpsim show DIR`` writes).

Every figure is a matplotlib ``Figure``: a notebook shows it, ``fig.savefig`` writes it.

Run it as a script::

    python examples/run_figures.py [--out DIR]

or cell by cell (``# %%`` markers) in Jupyter or VS Code.
"""

# %% Run the scenario, keeping the packet log
from __future__ import annotations

import argparse
from pathlib import Path

import sctpsim

HERE = Path(__file__).resolve().parent
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--out", type=Path, default=Path("results/run-figures"), help="output directory")
args, _ = parser.parse_known_args()  # tolerate the arguments a notebook kernel passes

result = sctpsim.run_file(HERE / "failover.toml", overrides=["record.packets=true"])
print(result)
print(result.packets.groupby(["kind", "retransmission"], observed=True).size())

# %% Per path: windows, timers, state, with the failover's events marked
fig = result.paths("upload")
fig  # noqa: B018 (a notebook displays the cell's last value)

# %% The time-sequence graph (zoomed on the break in the lower panel)
fig = result.sequence("upload")
fig  # noqa: B018

# %% Goodput per flow and the queues
flows, queues = result.flows(), result.queues()

# %% Everything on one page: the run directory, its figures and report.html
result.to_parquet(args.out)
for name, figure in {"paths": result.paths(), "sequence": result.sequence(), "flows": flows, "queues": queues}.items():
    figure.savefig(args.out / f"{name}.png")
page = sctpsim.write_run_report(args.out, result)
print(f"{len(page.figures)} figures, page: {page.html}")
# A run directory read back draws the same figures.
again = sctpsim.RunResult.load(args.out)
assert again.packets is not None and len(again.packets) == len(result.packets)
