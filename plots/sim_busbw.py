"""busbw against size: predicted (cclab-sim -J, dashed) and measured (*_perf -J, solid), overlaid.

    python3 plots/sim_busbw.py --predicted pred.json --measured meas.json -o busbw.png
"""
import argparse
import sys

import matplotlib.pyplot as plt

from sim_common import human_bytes, label, load_runs, series


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--predicted", nargs="*", default=[], help="cclab-sim -J files")
    ap.add_argument("--measured", nargs="*", default=[], help="bench *_perf -J files")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--title", default="bus bandwidth: predicted vs measured")
    args = ap.parse_args(argv)
    if not args.predicted and not args.measured:
        ap.error("give at least one --predicted or --measured file")
    fig, ax = plt.subplots(figsize=(8, 5))
    for files, style in ((args.measured, "-o"), (args.predicted, "--x")):
        for path in files:
            for run in load_runs(path):
                try:
                    sizes, _, busbw = series(run)
                except ValueError as e:
                    ap.exit(2, f"sim_busbw.py: {path}: {e}\n")
                if sizes:
                    ax.plot(sizes, busbw, style, label=label(run, path), markersize=4)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(args.title)
    ax.grid(True, which="both", alpha=0.3)
    ticks = [t for t in ax.get_xticks() if t >= 1]
    ax.set_xticks(ticks)
    ax.set_xticklabels([human_bytes(t) for t in ticks], rotation=45)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
