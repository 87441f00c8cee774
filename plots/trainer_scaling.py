#!/usr/bin/env python3
"""Scaling efficiency against workers, one line per mode (sync, async), with throughput beside it.

    plots/trainer_scaling.py s1.json s2.json s4.json a1.json a2.json a4.json -o scaling.png

Efficiency(N) = samples/s(N) / (N x samples/s(1)), against the 1-worker run of the same
configuration (which must be among the files). Runs are grouped by their full configuration (every
config field except workers, worker_batch and the throughput-neutral epochs, seed, lr, momentum,
weight decay); each group is one line, labelled by mode and the fields in which the groups differ.
Repeated runs of one configuration are combined by their median samples/s. Runs with a straggler
are ignored.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trainer_common import (InputError, config_key, group_labels, machine_note, median_samples_per_s,  # noqa: E402
                            run_cli, save_figure, straggler_factor)

PROG = "trainer_scaling.py"


def efficiencies(runs):
    """{configuration label: [(workers, samples/s, efficiency)]} sorted by workers."""
    groups = {}
    for run in runs:
        if straggler_factor(run) != 1.0:
            continue
        key = config_key(run, drop=("workers", "worker_batch", "straggler"))
        groups.setdefault(key, {}).setdefault(run["config"]["workers"], []).append(run)
    labels = group_labels(groups, lambda c: str(c.get("mode", "?")))
    by_mode = {labels[k]: v for k, v in groups.items()}
    out = {}
    for mode, groups in by_mode.items():
        points = {w: median_samples_per_s(g) for w, g in groups.items()}
        if 1 not in points:
            raise InputError(f"no 1-worker {mode} run: it is the baseline")
        out[mode] = [(w, sps, sps / (w * points[1])) for w, sps in sorted(points.items())]
    return out


def plot(runs, out, title):
    data = efficiencies(runs)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    for mode, points in sorted(data.items()):
        workers = [w for w, _, _ in points]
        left.plot(workers, [e for _, _, e in points], marker="o", label=mode)
        right.plot(workers, [s for _, s, _ in points], marker="o", label=mode)
    left.axhline(1.0, color="grey", linestyle="--")
    left.set_ylabel("scaling efficiency")
    right.set_ylabel("samples/s")
    for ax in (left, right):
        ax.set_xlabel("workers")
        ax.set_xscale("log", base=2)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title or f"cclab-train: scaling ({machine_note(runs)})")
    save_figure(fig, out)


def main(argv=None):
    return run_cli(PROG, __doc__, plot, argv, labels=False)


if __name__ == "__main__":
    sys.exit(main())
