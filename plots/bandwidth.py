#!/usr/bin/env python3
"""Bus bandwidth and time against message size, from one or more *_perf -J files.

    plots/bandwidth.py ours-ring.json mpi.json gloo.json -o cpu-peers.png

One line per input file (per data type and op when a file holds several): labelled
"<backend> <algo> n=<ranks>" unless --label gives names; one colour per implementation and one
line style per rank count. Sizes are on a log2 axis labelled
in B/KiB/MiB/GiB; busbw on a linear axis, time on a log axis. --placement picks the
out-of-place (default) or in-place measurements. Reads only the JSON schema of
docs/bench.md; never imports C++.
"""
import argparse
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
from matplotlib.ticker import FixedLocator, NullLocator  # noqa: E402

PROG = "bandwidth.py"
KIB = 1024
UNITS = ["B", "KiB", "MiB", "GiB", "TiB"]


class InputError(Exception):
    """A file that is not a readable *_perf JSON report."""


def size_label(size):
    """8 -> '8B', 65536 -> '64KiB', 1.5 MiB -> '1.5MiB'."""
    unit = 0
    value = float(size)
    while value >= KIB and unit < len(UNITS) - 1:
        value /= KIB
        unit += 1
    text = f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    return f"{text}{UNITS[unit]}"


def load_series(path, placement):
    """[(label_suffix, sizes, busbw, time_us)] of one report, one series per (type, redop)."""
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON: {e.msg} at line {e.lineno}") from e
    if not isinstance(report, dict):
        raise InputError(f"{path}: not a *_perf JSON report (expected an object)")
    for key in ("backend", "algo", "nranks", "results"):
        if key not in report:
            raise InputError(f"{path}: not a *_perf JSON report (no '{key}')")
    results = report["results"]
    if not isinstance(results, list) or not results:
        raise InputError(f"{path}: no results")
    groups = {}
    for i, row in enumerate(results):
        try:
            size = int(row["size"])
            m = row[placement]
            busbw, time_us = float(m["busbw"]), float(m["time_us"])
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{path}: results[{i}] lacks size/{placement}.busbw/{placement}.time_us") from e
        if size <= 0:
            continue  # a zero-byte row has no place on a log axis
        key = (row.get("type", ""), row.get("redop", ""))
        groups.setdefault(key, ([], [], []))
        for column, value in zip(groups[key], (size, busbw, time_us)):
            column.append(value)
    if not groups:
        raise InputError(f"{path}: no results with a size > 0")
    several = len(groups) > 1
    return report, [(f" {t} {op}" if several else "", *cols) for (t, op), cols in groups.items()]


def default_label(report):
    return f"{report['backend']} {report['algo']} n={report['nranks']}"


def size_ticks(lo, hi):
    """Powers of two from lo to hi, thinned to at most ~12 ticks."""
    first, last = int(math.floor(math.log2(lo))), int(math.ceil(math.log2(hi)))
    step = max(1, math.ceil((last - first + 1) / 12))
    return [2.0**e for e in range(first, last + 1, step)]


LINE_STYLES = ["-", "--", ":", "-."]


def plot(series, output, title):
    """series: [(label, implementation, nranks, sizes, busbw, times)]. One colour per implementation,
    one line style per rank count, so that "ring n=2" and "ring n=4" read as the same thing."""
    fig, (ax_bw, ax_t) = plt.subplots(1, 2, figsize=(13, 5.5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    impls = list(dict.fromkeys(s[1] for s in series))
    rank_counts = sorted({s[2] for s in series})
    all_sizes = []
    for label, impl, nranks, sizes, busbw, times in series:
        style = {"color": colours[impls.index(impl) % len(colours)],
                 "linestyle": LINE_STYLES[rank_counts.index(nranks) % len(LINE_STYLES)],
                 "marker": "o", "markersize": 3, "label": label}
        ax_bw.plot(sizes, busbw, **style)
        ax_t.plot(sizes, times, **style)
        all_sizes += sizes
    ticks = size_ticks(min(all_sizes), max(all_sizes))
    for ax in (ax_bw, ax_t):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([size_label(t) for t in ticks], rotation=45, ha="right")
        ax.set_xlabel("message size")
        ax.grid(True, which="both", alpha=0.3)
    ax_bw.set_ylabel("bus bandwidth (GB/s, 1e9 B/s)")
    ax_bw.set_title("busbw vs size")
    ax_t.set_yscale("log")
    ax_t.set_ylabel("time (us)")
    ax_t.set_title("time vs size")
    ax_bw.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="*_perf -J files")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--label", action="append", default=[],
                        help="label of the n-th input (repeat; default '<backend> <algo> n=<ranks>')")
    parser.add_argument("--placement", choices=("oop", "ip"), default="oop",
                        help="out-of-place (default) or in-place measurements")
    parser.add_argument("--title", default="", help="figure title")
    args = parser.parse_args(argv)
    if len(args.label) > len(args.inputs):
        print(f"{PROG}: error: {len(args.label)} labels for {len(args.inputs)} inputs", file=sys.stderr)
        return 2
    series = []
    try:
        for i, path in enumerate(args.inputs):
            report, groups = load_series(path, args.placement)
            if i < len(args.label):
                base, impl = args.label[i], args.label[i]
            else:
                base, impl = default_label(report), f"{report['backend']} {report['algo']}"
            series += [(base + suffix, impl + suffix, report["nranks"], *cols) for suffix, *cols in groups]
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    try:
        plot(series, args.output, args.title)
    except OSError as e:
        print(f"{PROG}: error: cannot write {args.output}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
