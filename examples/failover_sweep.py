"""Failover sweep, notebook style: a failover metric against Path.Max.Retrans, with
95% confidence intervals over replications.

**What this example uses today.** The SCTP engine is not part of sctpsim yet, so
there is no Path.Max.Retrans key and no failover-time scalar to sweep. The example
runs the same workflow on today's UDP scenario ``examples/two-path-cbr.toml``, in
which the R1-B link fails at 6 s and comes back later:

* ``PARAMETER`` is ``faults[1].at``, the instant the link is repaired (so the
  outage lasts from 6 s to that instant) -- the stand-in for Path.Max.Retrans;
* ``METRIC`` is ``flow/path1/loss_rate``, the loss rate of the UDP flow that
  crosses the failed link -- the stand-in for the failover time;
* 1% random loss on that flow's first link makes replications differ, so the
  confidence intervals are not empty.

To study SCTP failover once the engine lands, change only the four constants
below: ``SCENARIO`` (the SCTP failover scenario), ``PARAMETER`` (its
Path.Max.Retrans key), ``VALUES`` (e.g. ``[1, 2, 3, 4, 5]``) and ``METRIC`` (its
failover-time scalar, ``kind/entity/metric``); ``FIXED`` holds overrides for every
run. Everything else is generic.

Run it as a script::

    python examples/failover_sweep.py [--out DIR] [--jobs N] [--replications R]

or cell by cell (``# %%`` markers) in Jupyter or VS Code. Rerunning resumes: runs
already in the output directory are not simulated again.
"""

# %% Parameters of the study
from __future__ import annotations

import argparse
from pathlib import Path

import sctpsim

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "two-path-cbr.toml"  # later: the SCTP failover scenario
PARAMETER = "faults[1].at"  # later: the association's Path.Max.Retrans key
VALUES = ["6.5s", "7s", "8s", "9s"]  # later: e.g. [1, 2, 3, 4, 5]
METRIC = "flow/path1/loss_rate"  # later: the failover-time scalar
FIXED = {
    "duration": "10s",
    "links[0].loss": {"model": "bernoulli", "p": 0.01},
    "record.events": [],
    "record.capture": [],
}


def build_sweep(replications: int) -> sctpsim.Sweep:
    """The sweep as Python data: the same keys as a sweep TOML file."""
    return sctpsim.Sweep.from_dict(
        {
            "name": "failover",
            "scenario": sctpsim.load_scenario(SCENARIO),
            "seed": 1,
            "replications": replications,
            "metrics": [METRIC],
            "set": FIXED,
            "grid": {PARAMETER: VALUES},
        }
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=Path("results/failover"))
    parser.add_argument(
        "--jobs", type=int, default=None, help="parallel runs (default: one per CPU)"
    )
    parser.add_argument("--replications", type=int, default=10)
    args = parser.parse_args(argv)

    # %% Run the sweep (parallel, resumable; each run is stored as it finishes)
    sweep = build_sweep(args.replications)
    outcome = sctpsim.run_sweep(sweep, args.out, jobs=args.jobs)

    # %% Look at the numbers: one row per parameter value
    summary = outcome.summary
    print(
        summary[[PARAMETER, "n", "mean", "stdev", "ci95_low", "ci95_high"]].to_string(index=False)
    )
    runs = outcome.runs  # one row per run: parameters, seed, status, every scalar
    print(
        f"{len(runs)} runs, {int((runs['status'] != 'ok').sum())} failed; results in {outcome.directory}"
    )

    # %% Plot the metric against the parameter with 95% confidence intervals
    png, svg = sctpsim.plot_sweep(outcome.directory, x=PARAMETER, y=METRIC)
    print(f"plots: {png} {svg}")


if __name__ == "__main__":
    main()
