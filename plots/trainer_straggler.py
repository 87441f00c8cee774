#!/usr/bin/env python3
"""Straggler slowdown against the straggler's factor, one line per mode (sync, async).

    plots/trainer_straggler.py s4.json s4-st14.json s4-st20.json a4.json a4-st14.json a4-st20.json -o s.png

Slowdown = samples/s of the mode's run without a straggler (factor 1) / samples/s with it, so 1.0
means the straggler costs nothing and FACTOR means the whole run slows as much as the straggler.
Runs are grouped by their full configuration (every config field except the straggler and the
throughput-neutral epochs, seed, lr, momentum, weight decay); each group is one line, labelled by mode,
workers and the fields in which the groups differ, and needs a run without --straggler. Repeated runs
of one configuration and factor are combined by their median samples/s. The line y = factor is the fully
synchronous worst case.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trainer_common import (InputError, config_key, group_labels, machine_note, median_samples_per_s,  # noqa: E402
                            run_cli, save_figure, straggler_factor)

PROG = "trainer_straggler.py"


def slowdowns(runs):
    """{configuration label: [(factor, slowdown)]} sorted by factor; InputError if a configuration has
    no factor-1 run."""
    groups = {}
    for run in runs:
        groups.setdefault(config_key(run, drop=("straggler",)), {}).setdefault(straggler_factor(run), []).append(run)
    labels = group_labels(groups, lambda c: f"{c.get('mode', '?')} {c.get('workers', '?')}w")
    by_mode = {labels[k]: v for k, v in groups.items()}
    out = {}
    for mode, by_factor in by_mode.items():
        if 1.0 not in by_factor:
            raise InputError(f"no run without a straggler for {mode}: it is the baseline")
        base = median_samples_per_s(by_factor[1.0])
        out[mode] = sorted((factor, base / median_samples_per_s(group)) for factor, group in by_factor.items())
    return out


def plot(runs, out, title):
    data = slowdowns(runs)
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    top = 1.0
    for mode, points in sorted(data.items()):
        ax.plot([f for f, _ in points], [s for _, s in points], marker="o", label=mode)
        top = max(top, max(f for f, _ in points))
    ax.plot([1.0, top], [1.0, top], linestyle="--", color="grey", label="slowdown = factor")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("straggler factor (its compute is this many times slower)")
    ax.set_ylabel("run slowdown (samples/s without / with)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or f"cclab-train: straggler slowdown ({machine_note(runs)})", fontsize=10)
    save_figure(fig, out)


def main(argv=None):
    return run_cli(PROG, __doc__, plot, argv, labels=False)


if __name__ == "__main__":
    sys.exit(main())
