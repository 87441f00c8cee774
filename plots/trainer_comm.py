#!/usr/bin/env python3
"""Where a step's time goes, per run: stacked bars of compute, exposed communication and waiting
(per worker-step means), annotated with the communication fraction and, for sync, the overlap ratio.

    plots/trainer_comm.py s4.json s4-buckets.json a4.json -o trainer_comm.png

Reads the "summary" of cclab-train -J files (docs/trainer.md).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trainer_common import machine_note, run_cli, save_figure  # noqa: E402

PROG = "trainer_comm.py"
US_PER_MS = 1e3
PERCENT = 100.0
PARTS = (("compute_us", "compute"), ("exposed_comm_us", "exposed communication"), ("wait_us", "wait for peers"))


def step_split(run):
    """(compute, exposed comm, wait) in ms per worker-step; KeyError if missing."""
    s = run["summary"]
    return [s[key] / US_PER_MS for key, _ in PARTS]


def plot(runs, labels, out, title):
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(runs) + 2), 5))
    x = range(len(runs))
    bottoms = [0.0] * len(runs)
    splits = [step_split(r) for r in runs]
    for i, (_, name) in enumerate(PARTS):
        heights = [s[i] for s in splits]
        ax.bar(x, heights, bottom=bottoms, label=name)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    for xi, run, top in zip(x, runs, bottoms):
        s = run["summary"]
        note = f"comm {PERCENT * s['comm_fraction']:.0f}%"
        if run["config"]["mode"] == "sync":
            note += f"\noverlap {s['overlap_ratio']:.2f}"
        ax.annotate(note, (xi, top), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("time per worker-step (ms)")
    ax.set_ylim(0, max(bottoms) * 1.25 if bottoms and max(bottoms) > 0 else 1)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title or f"cclab-train: step time split ({machine_note(runs)})")
    save_figure(fig, out)


def main(argv=None):
    return run_cli(PROG, __doc__, plot, argv, labels=True)


if __name__ == "__main__":
    sys.exit(main())
