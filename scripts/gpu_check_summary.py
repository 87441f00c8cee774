#!/usr/bin/env python3
"""The summary of scripts/gpu_check: reads the scratch folder the check wrote and prints one table.

Sections: every step with its verdict and time, and the orderings cut after a timeout; the copy
ceiling; #wrong over the checked runs; the checked headline (-c 1 at the size the targets read); per
(K, algorithm, ordering) the time at the smallest and a middle size, busbw at the two largest sizes,
and for the ring the device memory it moved per second and the fraction of the copy ceiling; the
straggler runs; NCCL; the targets of docs/cuda.md, evaluated: a target is met only when the run it
reads was checked with #wrong 0 at the same size ("unchecked" otherwise). A cell is '-' when its figure is missing
(a step failed or was cut by the budget) and 'n/a' when the column does not apply to the row (the
bytes an allreduce moves are derived for the ring only, docs/cuda.md "Byte counts").
"""
import argparse
import glob
import json
import os
import sys

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
TARGET_COPY_FRACTION = 0.80  # docs/cuda.md: ring, K = 8, 256 MiB moves >= 80 % of the copy ceiling
TARGET_LATENCY_US = 15.0  # docs/cuda.md: 8 B at K = 8 with order=ll in <= 15 us
MISSING, NOT_APPLICABLE = "-", "n/a"


def parse_size(text):
    unit = text[-1] if text[-1] in "KMG" else ""
    return int(text[: len(text) - len(unit)]) * UNITS[unit]


def size_label(n):
    for unit in ("G", "M", "K"):
        if n >= UNITS[unit] and n % UNITS[unit] == 0:
            return f"{n // UNITS[unit]}{unit}iB"
    return f"{n}B"


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def at(results, size, key):
    for r in results or []:
        if r.get("size") == size:
            return (r.get("oop") or {}).get(key)
    return None


def fmt(value, spec):
    return MISSING if value is None else format(value, spec)


def ring_moved_bytes(k, n):
    # Ring on one device: each rank's K-1 reduce steps read 2c and write c, its K-1 copy steps read c
    # and write c (c = n/K): 5(K-1)/K n bytes per rank, 5(K-1) n over the K ranks (docs/cuda.md).
    return 5 * (k - 1) * n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["gpu", "rehearse"], required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--sizes", required=True, help="LATENCY,MIDDLE,BIG,MAX sizes of the summary, e.g. 8,1M,256M,1G")
    ap.add_argument("--ks", required=True, help="the K values swept, largest first")
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--elapsed", type=int, required=True)
    ap.add_argument("--status", type=int, required=True)
    a = ap.parse_args()
    d = a.scratch
    lat, mid, big, top = (parse_size(s) for s in a.sizes.split(","))
    kmax = max(int(k) for k in a.ks.split())

    title = "GPU check" if a.mode == "gpu" else "GPU check REHEARSAL (CPU stand-ins; no GPU figure)"
    print(f"# {title}: {a.elapsed} s of a {a.budget} s budget")
    try:
        with open(os.path.join(d, "device.txt")) as f:
            for line in f:
                print(f"#   {line.rstrip()}")
    except OSError:
        print(f"#   device: {MISSING}")

    steps = []
    try:
        with open(os.path.join(d, "steps.tsv")) as f:
            # name, verdict, seconds, note, ordering (empty when the step has none)
            steps = [(line.rstrip("\n").split("\t") + [""] * 5)[:5] for line in f if line.strip()]
    except OSError:
        pass
    counts = {}
    for _, verdict, _, _, _ in steps:
        counts[verdict] = counts.get(verdict, 0) + 1
    print(f"\nsteps: {len(steps)} — " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    for name, verdict, secs, note, _ in steps:
        if verdict != "ok" or not name.startswith(("check_", "perf_")):
            print(f"  {name:<28}{verdict:<9}{secs:>5} s  {note}")
    swept = [s for s in steps if s[0].startswith(("check_", "perf_"))]
    print(f"  ({sum(1 for s in swept if s[1] == 'ok')} of {len(swept)} sweep runs ok; the others are listed above)")
    cut_orders = {}
    for name, verdict, _, note, order in steps:
        if verdict == "skipped" and note.startswith(f"ordering {order} timed out in "):
            cut_orders.setdefault((order, note[len(f"ordering {order} timed out in "):]), []).append(name)
    for (order, first), names in sorted(cut_orders.items()):
        print(f"ordering {order} timed out in {first}: {len(names)} step(s) of it skipped: {' '.join(names)}")

    copy = load(os.path.join(d, "copy_bw.json"))
    copy_gbps = None
    if copy:
        for r in copy.get("results", []):
            if r.get("method") == "memcpy":
                copy_gbps = r.get("GBps")
        print(f"\ncopy ceiling ({copy.get('device', '?')}): " +
              ", ".join(f"{r['method']} {r['GBps']:.1f} GB/s" for r in copy.get("results", [])) +
              " (bytes read + written)")
    else:
        print(f"\ncopy ceiling: {MISSING}")

    wrong, unreadable = 0, []
    checked = sorted(glob.glob(os.path.join(d, "check_*.json")) + glob.glob(os.path.join(d, "headline_*.json")))
    for path in checked:
        j = load(path)
        if not j:
            unreadable.append(os.path.basename(path))
            continue
        for r in j.get("results", []):
            for side in ("oop", "ip"):
                w = (r.get(side) or {}).get("wrong")
                wrong += w or 0
    verdict = "all 0" if wrong == 0 else f"{wrong} wrong"
    if not checked or unreadable:
        verdict = f"{MISSING} ({wrong} wrong where read)"
    print(f"#wrong: {verdict} over {len(checked)} checked runs" + (f"; no JSON from {unreadable}" if unreadable else ""))

    # The checked headline: the rows the targets read, checked (-c 1) at the size they read.
    headline = {}
    print(f"\nchecked headline (-c 1 at {size_label(big)}):")
    for path in sorted(glob.glob(os.path.join(d, "headline_*.json"))):
        k, algo, order = os.path.basename(path)[len("headline_"):-len(".json")].split("_")
        j = load(path)
        res = j.get("results") if j else None
        w = None
        for r in res or []:
            if r.get("size") == big:
                w = sum(((r.get(side) or {}).get("wrong") or 0) for side in ("oop", "ip"))
        headline[(int(k[1:]), algo, order)] = w
        print(f"  K={k[1:]} {algo} {order}: #wrong {fmt(w, 'd')}, busbw {fmt(at(res, big, 'busbw'), '.1f')} GB/s")
    if not headline:
        print(f"  {MISSING} (not run)")

    head = (f"{'K':>2} {'algo':<7}{'order':<7}{size_label(lat) + ' us':>10}{size_label(mid) + ' us':>11}"
            f"{size_label(big) + ' busbw':>14}{size_label(top) + ' busbw':>13}{'ring moved GB/s':>17}{'of copy':>9}")
    print("\n" + head)
    rows = {}
    for path in glob.glob(os.path.join(d, "perf_*.json")):
        base = os.path.basename(path)[len("perf_"):-len(".json")]
        k, algo, order = base.split("_")
        rows[(int(k[1:]), algo, order)] = load(path)
    order_rank = {"events": 0, "graph": 1, "ll": 2}
    for (k, algo, order) in sorted(rows, key=lambda t: (-t[0], t[1], order_rank.get(t[2], 9))):
        j = rows[(k, algo, order)]
        res = j.get("results") if j else None
        t_lat, t_mid = at(res, lat, "time_us"), at(res, mid, "time_us")
        bw_big, bw_top = at(res, big, "busbw"), at(res, top, "busbw")
        if algo == "ring":
            t_big = at(res, big, "time_us")
            moved = ring_moved_bytes(k, big) / (t_big * 1e-6) / 1e9 if t_big else None
            frac = moved / copy_gbps if moved is not None and copy_gbps else None
            moved_s, frac_s = fmt(moved, ".0f"), (MISSING if frac is None else f"{100 * frac:.0f}%")
        else:
            moved_s = frac_s = NOT_APPLICABLE
        print(f"{k:>2} {algo:<7}{order:<7}{fmt(t_lat, '.1f'):>10}{fmt(t_mid, '.1f'):>11}{fmt(bw_big, '.1f'):>14}"
              f"{fmt(bw_top, '.1f'):>13}{moved_s:>17}{frac_s:>9}")
    if not rows:
        print(f"   {MISSING} (no timed run)")

    print()
    for delay in ("100us", "1ms"):
        j = load(os.path.join(d, f"straggler_{delay}.json"))
        res = j.get("results") if j else None
        sizes = [r["size"] for r in res or []]
        last = sizes[-1] if sizes else None
        print(f"straggler {delay} (K={kmax}, ring, events): {size_label(lat)} {fmt(at(res, lat, 'time_us'), '.1f')} us, "
              f"{size_label(last) if last else '?'} {fmt(at(res, last, 'time_us'), '.1f')} us")
    nccl = load(os.path.join(d, "nccl_k1.json"))
    res = nccl.get("results") if nccl else None
    label = "nccl K=1" if a.mode == "gpu" else "nccl K=1 stand-in (host, 1 rank)"
    # One rank: busbw is 0 by definition (2(n-1)/n), so the algorithm bandwidth is the figure.
    print(f"{label}: {size_label(lat)} {fmt(at(res, lat, 'time_us'), '.1f')} us, "
          f"{size_label(big)} algbw {fmt(at(res, big, 'algbw'), '.1f')} GB/s")

    ring = rows.get((kmax, "ring", "events"))
    t_big = at(ring.get("results") if ring else None, big, "time_us")
    frac = ring_moved_bytes(kmax, big) / (t_big * 1e-6) / 1e9 / copy_gbps if t_big and copy_gbps else None
    ll_algo = "auto" if (kmax, "auto", "ll") in rows else "rd"
    ll = rows.get((kmax, ll_algo, "ll"))
    t_lat = at(ll.get("results") if ll else None, lat, "time_us")
    # The latency row is checked at 8 B by the checked sweep (check_kK_ALGO_ll).
    lat_check = load(os.path.join(d, f"check_k{kmax}_{ll_algo}_ll.json"))
    lat_wrong = None
    for r in (lat_check or {}).get("results", []):
        if r.get("size") == lat:
            lat_wrong = sum(((r.get(side) or {}).get("wrong") or 0) for side in ("oop", "ip"))

    def verdict_of(ok, wrong):
        if ok is None:
            return MISSING
        if wrong is None:
            return "unchecked (no checked run at this size)"
        if wrong != 0:
            return f"MISSED (#wrong {wrong} in its checked run)"
        return "met" if ok else "MISSED"
    print(f"targets (K={kmax}): ring events {size_label(big)} moves {MISSING if frac is None else f'{100 * frac:.0f}%'} "
          f"of the copy ceiling (>= {100 * TARGET_COPY_FRACTION:.0f}%: "
          f"{verdict_of(None if frac is None else frac >= TARGET_COPY_FRACTION, headline.get((kmax, 'ring', 'events')))}); "
          f"{size_label(lat)} on ll ({ll_algo}) {fmt(t_lat, '.1f')} us "
          f"(<= {TARGET_LATENCY_US:.0f} us: {verdict_of(None if t_lat is None else t_lat <= TARGET_LATENCY_US, lat_wrong)})")
    if a.mode == "rehearse":
        print("(rehearsal: host backend at small K; the targets are the GPU's and are shown only to exercise the summary)")
    words = {0: "passed", 1: "FAILED", 3: "INCOMPLETE (budget spent)"}
    print(f"result: {words.get(a.status, 'FAILED')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
