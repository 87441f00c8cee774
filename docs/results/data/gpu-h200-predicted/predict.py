#!/usr/bin/env python3
"""The H200 prediction of docs/results/gpu-h200-predicted.md: runs cclab-sim, adds what it cannot express.

Run from the repository root (a Release build of cclab-sim in build/bin):

    python3 docs/results/data/gpu-h200-predicted/predict.py

It writes, next to itself, the raw output of every cclab-sim command it runs (sim-ORDERING-kK.txt and
.json: the replayed all_reduce_perf table, 8 B .. 1 GiB, ring, tree, dbtree, rhd, rd), the GPU step
counts it read from replay traces (steps.json), commands.txt, and tables.md (the predicted tables the
doc shows). Every constant below is explained, with its source, in the doc.
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))
ALGOS = ["ring", "tree", "dbtree", "rhd", "rd"]
RANKS = [2, 4, 8]
KEY_SIZES = [8, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30]

COPY_GBPS = 4300.0  # device-to-device copy, bytes read + written per ns (see the doc)

# One topology file per ordering; they differ only in classes.memory.latency_us (= ALPHA here).
ORDERINGS = {
    "events": {"topo": "sim/topologies/h200-virtual.json", "alpha": 4.0},
    "graph": {"topo": "sim/topologies/h200-graph.json", "alpha": 1.5},
    "ll": {"topo": "sim/topologies/h200-ll.json", "alpha": 1.0},
}

# Host (CPU) cost per call, µs: what one thread spends issuing one allreduce of all K ranks.
T_CALL = 1.0           # runGroup bookkeeping: plan-cache lookup, per-rank pointers (estimate)
T_LAUNCH = 3.0         # cudaLaunchKernel
T_EVENT = 1.0          # cudaEventRecord or cudaStreamWaitEvent
WAITS_PER_STEP = 1.5   # data-ready wait on the sender + write-after-send waits (about every other step)
T_GRAPH_LAUNCH = 3.5   # cudaGraphLaunch of a ~100-node graph
T_COOP_LAUNCH = 4.0    # cudaLaunchCooperativeKernel with ~2 KB of __grid_constant__ parameters

# GPU cost per call outside the plan's steps, µs (back-to-back calls on one stream).
GPU_FIXED = {"events": 0.0, "graph": 2.0, "ll": 3.0}


def human(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def run(cmd, log, shown=None):
    log.append(" ".join(shlex.quote(c) for c in (shown or cmd)))
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"predict.py: command failed ({res.returncode}): {log[-1]}\n{res.stderr}")
    return res.stdout


def hbm_bytes(algo, k, n):
    """Bytes of device memory read + written per allreduce by all K ranks (docs/cuda.md, Byte counts)."""
    if algo == "rd":  # log2 K whole-vector Reduce steps (3n each) and one local copy (2n) per rank
        return (3 * int(math.log2(k)) + 2) * k * n
    return 5 * (k - 1) * n  # ring, tree, dbtree, rhd (K a power of two): 3(K-1)n reduced + 2(K-1)n copied


def step_counts(sim, log):
    """GPU steps per call (all ranks) and local copies per rank, read from replay traces (same slicing
    as the CUDA lowering: one step per non-empty op)."""
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        for k in RANKS:
            for algo in ALGOS:
                for size in KEY_SIZES:
                    cmd = [sim, "allreduce", "--topo", ORDERINGS["ll"]["topo"], "-g", str(k), "--algo", algo,
                           "--slice", "whole", "-b", str(size), "-e", str(size), "--trace", trace]
                    run(cmd, log, cmd[:-1] + ["TMP/trace.json"])
                    with open(trace) as f:
                        events = json.load(f)["traceEvents"]
                    sends = sum(1 for e in events if e["name"].startswith("send->"))
                    copies = sum(1 for e in events if e["name"] == "copy")
                    counts[f"{k}/{algo}/{size}"] = {"steps": sends + copies, "copies": copies}
    return counts


def predict(ordering, k, algo, size, sim_us, steps):
    o = ORDERINGS[ordering]
    # rd ends with a local copy: a GPU step (a kernel, a graph node, a handshake) that the replay
    # charges bytes but no latency for.
    copy_steps_on_path = 1 if steps["copies"] > 0 else 0
    gpu = sim_us + copy_steps_on_path * o["alpha"] + GPU_FIXED[ordering]
    if ordering == "events":
        host = T_CALL + steps["steps"] * (T_LAUNCH + T_EVENT + WAITS_PER_STEP * T_EVENT) + k * 3 * T_EVENT
    elif ordering == "graph":
        host = T_CALL + T_GRAPH_LAUNCH
    else:
        host = T_CALL + T_COOP_LAUNCH
    # No schedule beats moving its bytes at the copy rate. The model charges 2.5 HBM bytes per message
    # byte, exact in total for ring, tree, dbtree and rhd; rd reduces everything (3 per byte) and ends
    # with a copy, so for rd the floor is the larger term at big sizes.
    floor = hbm_bytes(algo, k, size) / (COPY_GBPS * 1e3)
    return max(gpu, host, floor), gpu, host


def fmt_us(t):
    return f"{t:.0f}" if t >= 100 else f"{t:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", default="build/bin/cclab-sim", help="cclab-sim binary")
    ap.add_argument("--out", default=HERE, help="folder for the raw outputs")
    args = ap.parse_args()
    log = []
    sim_times = {}
    for ordering, o in ORDERINGS.items():
        for k in RANKS:
            stem = os.path.join(args.out, f"sim-{ordering}-k{k}")
            text = run([args.sim, "allreduce", "--topo", o["topo"], "-g", str(k), "--algo", ",".join(ALGOS),
                        "--slice", "whole", "-b", "8", "-e", "1G", "-f", "2", "-J", stem + ".json"], log)
            with open(stem + ".txt", "w") as f:
                f.write(text)
            with open(stem + ".json") as f:
                doc = json.load(f)
            with open(stem + ".json", "w") as f:  # the same JSON, one run per line (small files)
                f.write('{"runs": [\n' + ",\n".join(json.dumps(r, separators=(",", ":")) for r in doc["runs"]) + "\n]}\n")
            for r in doc["runs"]:
                for res in r["results"]:
                    sim_times[(ordering, k, r["algo"], res["size"])] = res["oop"]["time_us"]
    steps = step_counts(args.sim, log)
    with open(os.path.join(args.out, "steps.json"), "w") as f:
        json.dump(steps, f, indent=1, sort_keys=True)
        f.write("\n")

    out = []
    rows = []
    for k in RANKS:
        out.append(f"### K = {k}: predicted time per allreduce (µs), events / graph / ll\n")
        out.append("| size | " + " | ".join(ALGOS) + " | floor (ring, tree, dbtree, rhd) | floor (rd) |")
        out.append("|---:|" + "---:|" * (len(ALGOS) + 2))
        for size in KEY_SIZES:
            cells = []
            for algo in ALGOS:
                st = steps[f"{k}/{algo}/{size}"]
                triple = []
                for ordering in ORDERINGS:
                    sim_us = sim_times[(ordering, k, algo, size)]
                    pred, gpu, host = predict(ordering, k, algo, size, sim_us, st)
                    triple.append(fmt_us(pred))
                    busbw = 2 * (k - 1) / k * size / (pred * 1e3)
                    rows.append({"ordering": ordering, "nranks": k, "algo": algo, "size": size, "sim_us": sim_us,
                                 "gpu_us": gpu, "host_us": host, "predicted_us": pred, "busbw_gbps": busbw,
                                 "gpu_steps": st["steps"],
                                 "bound": "host" if host >= pred else "gpu" if gpu >= pred else "floor"})
                cells.append(" / ".join(triple))
            floor = hbm_bytes("ring", k, size) / (COPY_GBPS * 1e3)
            floor_rd = hbm_bytes("rd", k, size) / (COPY_GBPS * 1e3)
            out.append(f"| {human(size)} | " + " | ".join(cells) + f" | {fmt_us(floor)} | {fmt_us(floor_rd)} |")
        out.append("")
    out.append("### busbw (GB/s) at 256 MiB and 1 GiB, events / graph / ll\n")
    out.append("| K | size | " + " | ".join(ALGOS) + " | ceiling 2·copy/(5K) |")
    out.append("|---:|---:|" + "---:|" * (len(ALGOS) + 1))
    for k in RANKS:
        for size in (256 << 20, 1 << 30):
            cells = []
            for algo in ALGOS:
                cells.append(" / ".join(f"{r['busbw_gbps']:.0f}" for r in rows
                                        if r["nranks"] == k and r["algo"] == algo and r["size"] == size))
            out.append(f"| {k} | {human(size)} | " + " | ".join(cells) + f" | {2 * COPY_GBPS / (5 * k):.0f} |")
    out.append("")
    with open(os.path.join(args.out, "tables.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    with open(os.path.join(args.out, "predicted.json"), "w") as f:
        f.write('{"copy_gbps": %s, "rows": [\n' % COPY_GBPS + ",\n".join(json.dumps(r) for r in rows) + "\n]}\n")
    with open(os.path.join(args.out, "commands.txt"), "w") as f:
        f.write("\n".join(log) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
