#!/usr/bin/env python3
"""Train loss and test accuracy against epoch and against training time, one line per run.

    plots/trainer_curves.py s1.json s4.json a4.json a4dc.json -o trainer_curves.png

Reads cclab-train -J files (docs/trainer.md); labels come from each run's config unless --label
gives them. Time is training time (evaluation excluded), the epochs' "time_s".
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trainer_common import machine_note, run_cli, save_figure  # noqa: E402

PROG = "trainer_curves.py"
PERCENT = 100.0


def plot(runs, labels, out, title):
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for run, label in zip(runs, labels):
        epochs = [e["epoch"] + 1 for e in run["epochs"]]
        times = [e["time_s"] for e in run["epochs"]]
        loss = [e["train_loss"] for e in run["epochs"]]
        acc = [PERCENT * e["test_accuracy"] for e in run["epochs"]]
        axes[0][0].plot(epochs, loss, marker="o", label=label)
        axes[0][1].plot(times, loss, marker="o", label=label)
        axes[1][0].plot(epochs, acc, marker="o", label=label)
        axes[1][1].plot(times, acc, marker="o", label=label)
    for ax in axes[0]:
        ax.set_ylabel("train loss")
        ax.set_yscale("log")
    for ax in axes[1]:
        ax.set_ylabel("test accuracy (%)")
    for ax in (axes[0][0], axes[1][0]):
        ax.set_xlabel("epoch")
    for ax in (axes[0][1], axes[1][1]):
        ax.set_xlabel("training time (s)")
    for row in axes:
        for ax in row:
            ax.grid(True, alpha=0.3)
    axes[1][1].legend(fontsize=8)
    fig.suptitle(title or f"cclab-train: loss and accuracy ({machine_note(runs)})")
    save_figure(fig, out)


def main(argv=None):
    return run_cli(PROG, __doc__, plot, argv, labels=True)


if __name__ == "__main__":
    sys.exit(main())
