#!/usr/bin/env python3
"""The measured H200 tables beside the prediction written before any GPU run.

Reads the timed sweeps (perf_k{K}_{algo}_{order}.json, out of place) from the step archives that
scripts/gpu_check returned (check1_files.tar.gz and check2_files.tar.gz: two runs of the main check at
K = 8; followup_files.tar.gz: K = 4 and 2) and ../gpu-h200-predicted/predicted.json, and prints the
markdown tables of docs/results/gpu-h200.md. Run from anywhere: python3 compare.py
"""
import json
import statistics
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ALGOS = ["ring", "tree", "dbtree", "rhd", "rd"]
ORDERS = ["events", "graph", "ll"]
SIZES = [(8, "8 B"), (1 << 20, "1 MiB"), (256 << 20, "256 MiB"), (1 << 30, "1 GiB")]


def sweeps(archive):
    """{(K, algo, order): {size: out-of-place time in us}} of one archive's timed sweeps."""
    out = {}
    with tarfile.open(HERE / archive) as t:
        for m in t.getmembers():
            name = Path(m.name).name
            if not (name.startswith("perf_k") and name.endswith(".json")):
                continue
            k, algo, order = name[len("perf_k"):-len(".json")].split("_")
            d = json.load(t.extractfile(m))
            out[(int(k), algo, order)] = {r["size"]: r["oop"]["time_us"] for r in d["results"]}
    return out


def predicted():
    d = json.load(open(HERE.parent / "gpu-h200-predicted" / "predicted.json"))
    return {(r["nranks"], r["algo"], r["ordering"], r["size"]): r["predicted_us"] for r in d["rows"]}


def busbw(k, size, us):
    return 2 * (k - 1) / k * size / us / 1e3  # GB/s, nccl-tests' bus bandwidth


def fmt_us(v):
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def table(k, runs, pred):
    lines = [f"### K = {k}", "",
             "Cells: measured / predicted (µs per call, out of place); busbw in GB/s. "
             + ("Measured: the median of the main check's two runs (each run: `-w 3 -n 20`, more iterations "
                "at small sizes through `--iter-bytes 4G`); the two runs' spread is in the last column."
                if len(runs) > 1 else "Measured: one run (the follow-up)."), "",
             "| algo | order | " + " | ".join(label for _, label in SIZES[:3]) + " | busbw 256 MiB | busbw 1 GiB"
             + (" | spread (max/min over sizes) |" if len(runs) > 1 else " |"),
             "|---|---|" + "---:|" * 5 + ("---:|" if len(runs) > 1 else "")]
    for algo in ALGOS:
        for order in ORDERS:
            key = (k, algo, order)
            if any(key not in r for r in runs):
                continue
            meas = {s: statistics.median(r[key][s] for r in runs) for s, _ in SIZES}
            cells = [f"{fmt_us(meas[s])} / {fmt_us(pred[(k, algo, order, s)])}" for s, _ in SIZES[:3]]
            for s in (256 << 20, 1 << 30):
                cells.append(f"{busbw(k, s, meas[s]):.1f} / {busbw(k, s, pred[(k, algo, order, s)]):.1f}")
            row = f"| {algo} | {order} | " + " | ".join(cells) + " |"
            if len(runs) > 1:
                spread = max(max(r[key][s] for r in runs) / min(r[key][s] for r in runs) for s, _ in SIZES)
                row += f" {spread:.2f} |"
            lines.append(row)
    return "\n".join(lines)


def ratios(runs_by_k, pred):
    """Measured over predicted, per size class, over every (K, algo, order) cell."""
    lines = ["| K | size | measured / predicted: min | median | max |", "|---:|---|---:|---:|---:|"]
    for k, runs in runs_by_k.items():
        for s, label in SIZES:
            rs = [statistics.median(r[(k, a, o)][s] for r in runs) / pred[(k, a, o, s)]
                  for a in ALGOS for o in ORDERS if all((k, a, o) in r for r in runs)]
            lines.append(f"| {k} | {label} | {min(rs):.2f} | {statistics.median(rs):.2f} | {max(rs):.2f} |")
    return "\n".join(lines)


def main():
    pred = predicted()
    main_runs = [sweeps("check1_files.tar.gz"), sweeps("check2_files.tar.gz")]
    follow = [sweeps("followup_files.tar.gz")]
    print(table(8, main_runs, pred))
    print()
    print(table(4, follow, pred))
    print()
    print(table(2, follow, pred))
    print()
    print("### Measured over predicted")
    print()
    print(ratios({8: main_runs, 4: follow, 2: follow}, pred))


if __name__ == "__main__":
    main()
