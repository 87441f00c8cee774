"""Scaling curves from `cclab-sim scale -J`: time and busbw per algorithm against rank count.

    python3 plots/sim_scaling.py scale.json -o scaling.png
"""
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sim_common import human_bytes, scale_cli  # noqa: E402


def main(argv=None):
    args, doc, rows = scale_cli(__doc__.splitlines()[0], "rows", argv)
    by_algo = defaultdict(list)
    for r in rows:
        by_algo[r["algo"]].append((r["nranks"], r["time_us"], r["busbw"]))
    fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(11, 4.5))
    for algo, pts in sorted(by_algo.items()):
        pts.sort()
        ax_t.plot([p[0] for p in pts], [p[1] for p in pts], "-o", label=algo, markersize=4)
        ax_b.plot([p[0] for p in pts], [p[2] for p in pts], "-o", label=algo, markersize=4)
    for ax in (ax_t, ax_b):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("ranks")
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("time (us)")
    ax_b.set_ylabel("busbw (GB/s)")
    ax_b.legend(fontsize=8)
    size = doc.get("size")
    fig.suptitle(f"predicted allreduce of {human_bytes(size) if size else '?'} on {doc.get('topology', '?')} "
                 f"({doc.get('model', '?')} model)")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
