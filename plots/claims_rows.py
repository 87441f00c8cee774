#!/usr/bin/env python3
"""The figures of scripts/claims' scale rows, from the JSON the script writes next to its runs.

    plots/claims_rows.py links links.json -o claims_links.png
    plots/claims_rows.py throughput scale.json -o claims_throughput.png

links: {"message_bytes": M, "ranks": [..], "ring": {"busiest": [..], "root": [..]}, "tree": {...}}:
the busiest link's bytes and the root node's busiest link's bytes (both / M) against the ranks, for
ring and tree (cclab-sim replay --links).
throughput: {"workers": [..], "series": {"sync": [..], ...}, "measured": {...}} per model preset
(samples/s against workers, log-log), each series one line; series named '... straggler' dashed.
Bad input prints one line and exits 2.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROG = "claims_rows.py"


class InputError(Exception):
    pass


def load(path, keys):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON: {e.msg} (line {e.lineno})") from e
    for k in keys:
        if not isinstance(data, dict) or k not in data:
            raise InputError(f"{path}: missing '{k}'")
    return data


def links(data, out):
    fig, ax = plt.subplots(figsize=(6.5, 4.3))
    ranks = data["ranks"]
    for algo, style in (("ring", "o"), ("tree", "s")):
        if algo not in data:
            continue
        ax.plot(ranks, data[algo]["busiest"], marker=style, label=f"{algo}: busiest link")
        ax.plot(ranks, data[algo]["root"], marker=style, linestyle="--", label=f"{algo}: root node's busiest link")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks")
    ax.set_ylabel("bytes on the link / message size")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(data.get("title", "per-link bytes against ranks (cclab-sim replay)"), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def throughput(data, out):
    presets = data["presets"]
    fig, axes = plt.subplots(1, len(presets), figsize=(5.5 * len(presets), 4.3), squeeze=False)
    for ax, (name, p) in zip(axes[0], presets.items()):
        for series, values in p["series"].items():
            ax.plot(p["workers"], values, marker=".", linestyle="--" if "straggler" in series else "-", label=series)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("workers")
        ax.set_ylabel("samples/s (predicted)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title(name, fontsize=10)
    fig.suptitle(data.get("title", "throughput against workers"), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["links", "throughput"])
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args(argv)
    try:
        if a.kind == "links":
            links(load(a.file, ["ranks"]), a.output)
        else:
            throughput(load(a.file, ["presets"]), a.output)
    except (InputError, KeyError, TypeError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
