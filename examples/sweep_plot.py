"""A notebook-style example of the Python package: run a sweep, plot one metric against its
grid parameter (a line per protocol, with the 95% confidence interval as a band), save a PNG.

    pip install ./python matplotlib
    python examples/sweep_plot.py                  # writes ./session-timeout-vs-protocol-downtime_partition_s.png
    python examples/sweep_plot.py --metric records_reprocessed --seeds 5 --out reprocessed.png

Each cell of the sweep `sims/sweeps/session-timeout-vs-protocol.toml` is `sims/crash.toml`
with another `session.timeout.ms`: a member crashes and its partitions wait for the session to
expire, so partition downtime should grow with the timeout (except for KIP-848's
consumer:uniform, whose session timeout is the broker's).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: render straight to a file
import matplotlib.pyplot as plt  # noqa: E402

import rebalance_sim  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweep", type=Path, default=REPO / "sims/sweeps/session-timeout-vs-protocol.toml")
    parser.add_argument("--metric", default="downtime_partition_s", help="a summary column, e.g. records_reprocessed")
    parser.add_argument("--seeds", type=int, default=3, help="replications per cell (the file has 10)")
    parser.add_argument("--out", type=Path, help="PNG to write (default: ./<sweep>-<metric>.png)")
    return parser.parse_args()


def bad_input(message: str) -> None:
    """Exits 2 with the message on stderr, as the CLI does for bad input."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def protocol_label(row) -> str:
    return f"{row.protocol}:{row.assignor}" + ("+static" if row.static_membership else "")


def plot(aggregate, parameter: str, metric: str, title: str, out: Path) -> None:
    aggregate = aggregate.assign(label=[protocol_label(r) for r in aggregate.itertuples()])
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    for label, rows in aggregate.groupby("label", sort=False):
        rows = rows.sort_values(parameter)
        ax.plot(rows[parameter], rows[f"{metric}_mean"], marker="o", label=label)
        low, high = rows[f"{metric}_ci95_lo"], rows[f"{metric}_ci95_hi"]
        if low.notna().all():  # one replication has no interval
            ax.fill_between(rows[parameter], low, high, alpha=0.2)
    ax.set_xlabel(parameter)
    ax.set_ylabel(f"{metric} (mean, 95% CI)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, format="png")
    plt.close(fig)


def main() -> None:
    args = parse_args()
    if args.seeds < 1:
        bad_input(f"--seeds {args.seeds}: must be at least 1")
    result = rebalance_sim.sweep(args.sweep, seeds=args.seeds)
    aggregate = result.aggregate
    # aggregate.csv: cell, <grid keys>..., protocol, ...: the first grid key is column 1.
    parameter = aggregate.columns[1]
    metrics = [c[: -len("_mean")] for c in aggregate.columns if c.endswith("_mean")]
    if args.metric not in metrics:
        bad_input(f"--metric {args.metric}: not a metric of aggregate.csv; allowed: {', '.join(metrics)}")
    name = args.sweep.stem
    out = args.out or Path(f"{name}-{args.metric}.png")
    title = f"{name}: {len(result.runs)} runs, {args.seeds} seeds per cell"
    plot(aggregate, parameter, args.metric, title, out)
    print(f"wrote {os.path.abspath(out)}")


if __name__ == "__main__":
    main()
