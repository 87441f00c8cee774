"""Crossover map from `cclab-sim scale -J`: below each line a tree beats the ring.

    python3 plots/sim_crossover.py scale.json -o crossover.png
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sim_common import human_bytes, scale_cli  # noqa: E402

LINES = (("tree_vs_ring_bytes", "tree vs ring"), ("dbtree_vs_ring_bytes", "double binary tree vs ring"))


def main(argv=None):
    args, doc, cross = scale_cli(__doc__.splitlines()[0], "crossover", argv)
    fig, ax = plt.subplots(figsize=(7, 5))
    top = 1
    for key, name in LINES:
        pts = sorted((c["nranks"], c[key]) for c in cross if c.get(key) and c[key] > 0)
        if pts:
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            ax.plot(xs, ys, "-o", label=name + " (tree faster below)", markersize=4)
            top = max(top, max(ys))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("ranks")
    ax.set_ylabel("message size (bytes)")
    ticks = [t for t in ax.get_yticks() if t >= 1]
    ax.set_yticks(ticks)
    ax.set_yticklabels([human_bytes(t) for t in ticks])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"predicted ring/tree crossover on {doc.get('topology', '?')}")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
