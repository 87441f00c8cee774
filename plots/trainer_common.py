"""Shared helpers for the trainer plots: reading cclab-train -J files (schema cclab-train/1,
docs/trainer.md) and naming runs. Reads JSON only; never imports C++."""
import argparse
import json
import sys
import statistics

SCHEMA = "cclab-train/1"


class InputError(Exception):
    """A file that is not a readable cclab-train -J report."""


def load_run(path):
    """The parsed report, or InputError naming the file and the problem."""
    try:
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON: {e.msg} (line {e.lineno})") from e
    if not isinstance(run, dict) or run.get("schema") != SCHEMA:
        raise InputError(f"{path}: not a cclab-train report (schema {SCHEMA!r} expected)")
    for key in ("config", "summary", "epochs"):
        if key not in run:
            raise InputError(f"{path}: missing '{key}'")
    return run


def load_runs(paths):
    return [load_run(p) for p in paths]


# Config fields that do not change throughput: runs differing only in these are repeats of one
# configuration (the same list cclab-train's --*-baseline check ignores, trainer/report/baseline.h).
THROUGHPUT_NEUTRAL = ("epochs", "seed", "lr", "momentum", "weight_decay")


def config_key(run, drop=()):
    """The run's full configuration, less throughput-neutral fields and `drop`, as a hashable key."""
    c = run["config"]
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in c.items()
                        if k not in THROUGHPUT_NEUTRAL and k not in drop))


def _value(text):
    v = json.loads(text)
    if isinstance(v, list):
        return "-".join(str(x) for x in v)
    if isinstance(v, dict):
        return ",".join(f"{k}:{x}" for k, x in sorted(v.items()))
    return f"{v:g}" if isinstance(v, float) else str(v)


def group_labels(keys, base):
    """{key: label} for configuration keys: base(key as dict) plus every field that differs between
    the keys (so runs of different configurations are never drawn as one line, and the legend says how
    they differ)."""
    keys = list(keys)
    dicts = {k: dict(k) for k in keys}
    fields = sorted({f for d in dicts.values() for f in d})
    varying = [f for f in fields if len({d.get(f) for d in dicts.values()}) > 1]
    out = {}
    for k, d in dicts.items():
        label = base({f: json.loads(v) for f, v in d.items()})
        extra = [f"{f} {_value(d[f])}" for f in varying if f in d and f not in ("mode", "workers")]
        out[k] = label + (" (" + ", ".join(extra) + ")" if extra else "")
    return out


def straggler_factor(run):
    """1.0 without a straggler."""
    s = run["config"].get("straggler")
    return float(s["factor"]) if s else 1.0


def run_label(run):
    """'sync 4w', 'async 4w DC 0.04', 'async 4w SSP 4', '+ straggler 1:1.4', '+ label-skew:0.1' (--shard)."""
    c = run["config"]
    label = f"{c['mode']} {c['workers']}w"
    if c["mode"] == "async":
        if c.get("dc_lambda", 0) > 0:
            label += f" DC {c['dc_lambda']:g}"
        if c.get("ssp", -1) >= 0:
            label += f" SSP {c['ssp']}"
    s = c.get("straggler")
    if s:
        label += f" straggler {s['rank']}:{s['factor']:g}"
    if c.get("shard", "shuffle-each-epoch") != "shuffle-each-epoch":
        label += f" {c['shard']}"
    return label


def labels_for(runs, given):
    """--label values when given (one per run), else run_label()."""
    if given:
        if len(given) != len(runs):
            raise InputError(f"{len(given)} labels for {len(runs)} files")
        return list(given)
    return [run_label(r) for r in runs]


def machine_note(runs):
    """'host (2 cores), 2026-01-01' of the first run, for titles."""
    m = runs[0].get("machine", {})
    return f"{m.get('host', '?')} ({m.get('cores', '?')} cores), {str(m.get('date', '?'))[:10]}"


def median_samples_per_s(runs):
    """Median summary.samples_per_s of repeated runs of one configuration."""
    try:
        return statistics.median(r["summary"]["samples_per_s"] for r in runs)
    except KeyError as e:
        raise InputError(f"a report's summary lacks {e}") from e


def save_figure(fig, path):
    """Lays out a trainer figure, writes it (110 dpi) and closes it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_cli(prog, doc, draw, argv=None, labels=False):
    """The trainer plots' shared command line: FILES... -o PNG [--label L ...] [--title T].

    draw(runs, labels, output, title) when labels is true, else draw(runs, output, title). Bad input
    prints one line and returns 2."""
    p = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="cclab-train -J files")
    p.add_argument("-o", "--output", required=True, help="PNG to write")
    if labels:
        p.add_argument("--label", action="append", help="one per file, in order")
    p.add_argument("--title")
    args = p.parse_args(argv)
    try:
        runs = load_runs(args.files)
        if labels:
            draw(runs, labels_for(runs, args.label), args.output, args.title)
        else:
            draw(runs, args.output, args.title)
    except KeyError as e:
        print(f"{prog}: a report's summary lacks {e}", file=sys.stderr)
        return 2
    except InputError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    return 0
