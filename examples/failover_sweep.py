"""Failover sweep, notebook style: SCTP failover time against Path.Max.Retrans, one line
per RTO.Max, with 95% confidence intervals over replications.

The scenario is ``examples/failover.toml``: two multihomed hosts, two disjoint routed
paths, a bulk upload over the primary path, whose last link breaks at t = 10 s. The sweep
varies the sender's Path.Max.Retrans (``apps[1].sctp.path_max_retrans``) and RTO.Max
(``apps[1].sctp.rto_max``) and reads ``sctp/upload/failover_time``: the time from the
break until the sender marks the primary inactive.

With RTO.Min = 1 s and no RTT above it, RFC 9260 makes the failover time the sum of the
backed-off RTOs, 1 + 2 + 4 + ... capped at RTO.Max, Path.Max.Retrans + 1 terms. 1% random
loss on the primary's first link makes replications differ: it moves the instant the
retransmission timer was last started before the break, and a loss-induced timeout just
before the break already counts as one error. Lower RTO.Min (``apps[1].sctp.rto_min``) to
let measured RTTs matter.

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
SCENARIO = HERE / "failover.toml"
PARAMETER = "apps[1].sctp.path_max_retrans"
VALUES = [1, 2, 3, 4, 5]
HUE = "apps[1].sctp.rto_max"
HUE_VALUES = ["60s", "10s"]
METRIC = "sctp/upload/failover_time"
FIXED = {
    # Long enough for the slowest failover: 10 s + 63 s with the RFC 9260 defaults.
    "duration": "80s",
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
            "grid": {PARAMETER: VALUES, HUE: HUE_VALUES},
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
        summary[[HUE, PARAMETER, "n", "mean", "stdev", "ci95_low", "ci95_high"]].to_string(
            index=False
        )
    )
    runs = outcome.runs  # one row per run: parameters, seed, status, every scalar
    print(
        f"{len(runs)} runs, {int((runs['status'] != 'ok').sum())} failed; results in {outcome.directory}"
    )

    # %% Plot the metric against the parameter with 95% confidence intervals
    png, svg = sctpsim.plot_sweep(outcome.directory, x=PARAMETER, y=METRIC, hue=HUE)
    print(f"plots: {png} {svg}")


if __name__ == "__main__":
    main()
