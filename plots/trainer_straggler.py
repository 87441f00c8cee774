#!/usr/bin/env python3
"""Straggler slowdown against the straggler's factor, one line per mode (sync, async).

    plots/trainer_straggler.py s4.json s4-st14.json s4-st20.json a4.json a4-st14.json a4-st20.json -o s.png

Slowdown = samples/s of the mode's run without a straggler (factor 1) / samples/s with it, so 1.0
means the straggler costs nothing and FACTOR means the whole run slows as much as the straggler.
Each mode needs a run without --straggler among the files. Repeated runs of one configuration
(mode, workers, factor) are combined by their median samples/s. The line y = factor is the fully
synchronous worst case.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trainer_common import (InputError, machine_note, median_samples_per_s, run_cli, save_figure,  # noqa: E402
                            straggler_factor)

PROG = "trainer_straggler.py"


def slowdowns(runs):
    """{mode: [(factor, slowdown)]} sorted by factor; InputError if a mode has no factor-1 run."""
    by_mode = {}
    for run in runs:
        key = f"{run['config']['mode']} {run['config']['workers']}w"
        by_mode.setdefault(key, {}).setdefault(straggler_factor(run), []).append(run)
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
