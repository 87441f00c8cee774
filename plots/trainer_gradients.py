#!/usr/bin/env python3
"""Gradient statistics of sync runs: the across-worker variance per step, and each worker's mean
gradient norm, one line (and one group of markers) per run.

    plots/trainer_gradients.py iid.json skew.json hard.json -o gradients.png

Reads the per-step figures cclab-train -J writes for --mode sync (docs/trainer.md, "Gradient
statistics"): grad_norm (worker r's |g_r| before the allreduce), mean_grad_norm (|gbar|) and
grad_variance ((1/N) sum_r |g_r - gbar|^2, the trace of the covariance across workers). Left: the
variance against the step; right: the mean |g_r| per rank, so a worker given the hard samples stands
out. Runs are labelled by mode, workers and --shard (--label overrides). Async runs have no statistics and
are refused.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trainer_common import InputError, machine_note, run_cli, save_figure  # noqa: E402

PROG = "trainer_gradients.py"


def gradient_series(run):
    """(variance per step in order, mean |g_r| per rank); InputError without statistics."""
    per_step, norms = {}, {}
    for s in run.get("steps", []):
        if s.get("grad_variance") is None or s.get("grad_norm") is None:
            continue
        per_step[(s["epoch"], s["step"])] = s["grad_variance"]
        norms.setdefault(s["rank"], []).append(s["grad_norm"])
    if not per_step:
        raise InputError(f"a {run['config'].get('mode', '?')} run has no gradient statistics (sync runs have them)")
    variance = [per_step[k] for k in sorted(per_step)]
    return variance, {r: sum(v) / len(v) for r, v in sorted(norms.items())}


def plot(runs, labels, out, title):
    series = [gradient_series(r) for r in runs]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for (variance, _), label in zip(series, labels):
        left.plot(range(len(variance)), variance, linewidth=1, label=label)
    left.set_yscale("log")
    left.set_xlabel("step")
    left.set_ylabel("across-worker variance (1/N) sum |g_r - gbar|^2")
    left.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    width = 0.8 / max(len(series), 1)
    for k, ((_, norms), label) in enumerate(zip(series, labels)):
        ranks = list(norms)
        right.bar([r + (k - (len(series) - 1) / 2) * width for r in ranks], [norms[r] for r in ranks], width, label=label)
    right.set_xticks(sorted({r for _, norms in series for r in norms}))
    right.set_xlabel("rank")
    right.set_ylabel("mean |g_r| over steps")
    right.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title or f"cclab-train: gradient statistics ({machine_note(runs)})", fontsize=10)
    save_figure(fig, out)


def main(argv=None):
    return run_cli(PROG, __doc__, plot, argv, labels=True)


if __name__ == "__main__":
    sys.exit(main())
