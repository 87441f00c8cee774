"""Measured against predicted time per size, and the error coloured by the model's dominant term, from
cclab-sim compare -J.

    python3 plots/sim_compare.py compare.json -o compare.png [--in-place]
"""
import argparse
import json
import sys
from collections import defaultdict

import matplotlib.pyplot as plt

from sim_common import human_bytes

TERM_COLOURS = {"latency": "tab:blue", "bandwidth": "tab:orange", "reduction": "tab:green"}
ROW_KEYS = ("file", "run", "collective", "size", "in_place", "measured_us", "predicted_us", "rel_error", "dominant")


def load(path):
    """The rows of a compare -J file; ValueError naming what is wrong."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read it as JSON: {e}") from e
    if not isinstance(doc, dict) or doc.get("command") != "compare":
        raise ValueError("not a cclab-sim compare -J file (no \"command\": \"compare\")")
    rows = doc.get("rows")
    if not isinstance(rows, list) or not rows:
        raise ValueError("field 'rows' is missing or empty")
    for i, r in enumerate(rows):
        missing = [k for k in ROW_KEYS if k not in r]
        if missing:
            raise ValueError(f"rows[{i}] lacks {', '.join(missing)}")
        if not (r["measured_us"] > 0 and r["predicted_us"] > 0 and r["size"] > 0):
            raise ValueError(f"rows[{i}]: size and times must be positive")
    return doc, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("compare", help="cclab-sim compare -J file")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--in-place", action="store_true", help="plot the in-place columns (default: out-of-place)")
    args = ap.parse_args(argv)
    try:
        doc, rows = load(args.compare)
    except ValueError as e:
        ap.exit(2, f"sim_compare.py: {args.compare}: {e}\n")
    rows = [r for r in rows if bool(r["in_place"]) == args.in_place]
    if not rows:
        ap.exit(2, f"sim_compare.py: {args.compare}: no {'in-place' if args.in_place else 'out-of-place'} rows\n")
    runs = defaultdict(list)
    for r in rows:
        runs[(r["file"], r["run"], r["collective"])].append(r)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 8), sharex=True)
    for (path, run, coll), rs in sorted(runs.items()):
        rs.sort(key=lambda r: r["size"])
        sizes = [r["size"] for r in rs]
        name = f"{path.rsplit('/', 1)[-1]}#{run} {coll}"
        line, = top.plot(sizes, [r["measured_us"] for r in rs], "-o", markersize=3, label=f"{name} measured")
        top.plot(sizes, [r["predicted_us"] for r in rs], "--x", color=line.get_color(), markersize=3, label=f"{name} predicted")
        bottom.plot(sizes, [100 * r["rel_error"] for r in rs], "-", color=line.get_color(), alpha=0.4)
        for term, colour in TERM_COLOURS.items():
            pts = [r for r in rs if r["dominant"] == term]
            if pts:
                bottom.scatter([r["size"] for r in pts], [100 * r["rel_error"] for r in pts], color=colour, s=14,
                               label=f"{term} dominates", zorder=3)
    top.set_xscale("log", base=2)
    top.set_yscale("log")
    top.set_ylabel("time (us)")
    top.set_title(f"measured vs predicted ({doc.get('model', '?')}) on {doc.get('topology', '?')}")
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize=7)
    bottom.axhline(0, color="black", linewidth=0.8)
    bottom.set_ylabel("error (predicted - measured) / measured, %")
    bottom.set_xlabel("size (bytes)")
    bottom.grid(True, which="both", alpha=0.3)
    handles, labels = bottom.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    bottom.legend(unique.values(), unique.keys(), fontsize=7)
    ticks = [t for t in bottom.get_xticks() if t >= 1]
    bottom.set_xticks(ticks)
    bottom.set_xticklabels([human_bytes(t) for t in ticks], rotation=45)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
