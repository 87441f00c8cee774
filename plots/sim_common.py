"""Shared readers for the simulator plots: cclab-sim -J output and bench/*_perf -J output.

Both have the same shape ({"collective", "algo", "nranks", "results": [{"size", "oop": {"time_us",
"busbw", ...}, "ip": {...}}]}); cclab-sim adds "predicted": true. A file may also hold {"runs": [...]}
(cclab-sim with several --algo values). The readers are tolerant: a missing "oop" falls back to "ip",
and "time" is accepted for "time_us". busbw is read, never recomputed: both tools write it with
nccl-tests' factors (collectives/conventions/bandwidth.h), and a row without it is an error.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")

def scale_cli(description, key, argv=None):
    """The command line of the `cclab-sim scale -J` plots: (args, doc, doc[key]); exits when key is empty."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("scale_json")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    with open(args.scale_json) as f:
        doc = json.load(f)
    items = doc.get(key, [])
    if not items:
        sys.exit(f"{args.scale_json}: no '{key}' (expected cclab-sim scale -J output)")
    return args, doc, items


def load_runs(path):
    """A list of run dicts from one JSON file."""
    with open(path) as f:
        doc = json.load(f)
    if isinstance(doc, dict) and isinstance(doc.get("runs"), list):
        return doc["runs"]
    if isinstance(doc, list):
        return doc
    return [doc]


def _timing(row):
    for key in ("oop", "ip"):
        t = row.get(key)
        if isinstance(t, dict) and ("time_us" in t or "time" in t):
            return t
    return row


def series(run):
    """(sizes in bytes, times in us, busbw in GB/s) of one run, sorted by size."""
    rows = []
    for i, row in enumerate(run.get("results", [])):
        size = row.get("size")
        t = _timing(row)
        time = t.get("time_us", t.get("time"))
        if not size or not time:
            continue
        busbw = t.get("busbw")
        if busbw is None:
            raise ValueError(f"results[{i}] has no busbw (write the file with cclab-sim or *_perf -J)")
        rows.append((int(size), float(time), float(busbw)))
    rows.sort()
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def label(run, path=""):
    kind = "predicted" if run.get("predicted") else "measured"
    where = run.get("topology") or run.get("backend") or path
    return f"{run.get('algo', '?')} p={run.get('nranks', '?')} {kind} ({where})"


def human_bytes(b):
    for unit in ("B", "K", "M", "G", "T"):
        if abs(b) < 1024 or unit == "T":
            return f"{b:g}{unit}"
        b /= 1024.0
    return f"{b:g}"
