"""busbw against node count per algorithm, one panel per `cclab-sim scale -J` file (e.g. 8 NICs and 4 NICs).

    python3 plots/sim_scaling_panels.py a.json b.json --titles "8 NICs" "4 NICs" -o scaling.png
"""
import argparse
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sim_common import human_bytes  # noqa: E402


def load(path):
    with open(path) as f:
        doc = json.load(f)
    rows = doc.get("rows", []) if isinstance(doc, dict) else []
    if not rows:
        sys.exit(f"{path}: no 'rows' (expected cclab-sim scale -J output)")
    return doc, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scale_json", nargs="+")
    ap.add_argument("--titles", nargs="*", default=None, help="one per file (default: the file's topology)")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    if args.titles and len(args.titles) != len(args.scale_json):
        ap.error(f"{len(args.titles)} titles for {len(args.scale_json)} files")
    docs = [load(p) for p in args.scale_json]
    fig, axes = plt.subplots(1, len(docs), figsize=(5.5 * len(docs), 4.5), squeeze=False, sharey=True)
    for i, ((doc, rows), ax) in enumerate(zip(docs, axes[0])):
        by_algo = defaultdict(list)
        for r in rows:
            by_algo[r["algo"]].append((r["nodes"], r["busbw"]))
        for algo, pts in sorted(by_algo.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", label=algo, markersize=4)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes")
        ax.grid(True, which="both", alpha=0.3)
        size = doc.get("size")
        title = args.titles[i] if args.titles else doc.get("topology", "?")
        ax.set_title(f"{title}: {human_bytes(size) if size else '?'}, {doc.get('model', '?')}")
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("busbw (GB/s)")
    fig.suptitle("predicted allreduce busbw against node count")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
