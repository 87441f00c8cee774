"""plots/sim_*.py: cclab-sim and *_perf JSON in, PNG out; bad input fails with a clear message."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLOTS = ROOT / "plots"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
sys.path.insert(0, str(PLOTS))

import sim_common  # noqa: E402


def run_script(name, *args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(PLOTS / name), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)


def perf_json(predicted, algo="ring", nranks=8, sizes=(8, 1024, 1 << 20, 64 << 20)):
    results = []
    for s in sizes:
        t = {"time_us": 5.0 + s / 4e3, "algbw": s / (5.0 + s / 4e3) / 1e3,
             "busbw": 1.75 * s / (5.0 + s / 4e3) / 1e3, "wrong": None if predicted else 0}
        results.append({"size": s, "count": s // 4, "type": "float", "redop": "sum", "root": -1, "oop": t, "ip": t})
    doc = {"collective": "allreduce", "algo": algo, "nranks": nranks, "type": "float", "op": "sum",
           "results": results}
    if predicted:
        doc.update({"predicted": True, "model": "replay", "topology": "dgx-h100", "backend": "sim"})
    else:
        doc["backend"] = "host"
    return doc


def scale_json():
    rows, cross = [], []
    for nodes in (1, 2, 4, 8):
        p = nodes * 8
        for algo, t in (("ring", 100.0 + p), ("tree", 80.0 + 3 * p)):
            rows.append({"nodes": nodes, "nranks": p, "algo": algo, "size": 1 << 28, "time_us": t,
                         "busbw": (1 << 28) / (t * 1e3) * 2 * (p - 1) / p, "algbw": 1.0})
        cross.append({"nodes": nodes, "nranks": p, "tree_vs_ring_bytes": 65536.0 * nodes,
                      "dbtree_vs_ring_bytes": -1 if nodes == 1 else 32768.0 * nodes})
    return {"command": "scale", "predicted": True, "model": "analytic", "topology": "cluster", "size": 1 << 28,
            "rows": rows, "crossover": cross}


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def is_png(path):
    return path.exists() and path.read_bytes()[:8] == PNG_MAGIC


def test_busbw_overlay(tmp_path):
    pred = write(tmp_path, "pred.json", {"runs": [perf_json(True), perf_json(True, algo="tree")]})
    meas = write(tmp_path, "meas.json", perf_json(False))
    out = tmp_path / "busbw.png"
    r = run_script("sim_busbw.py", "--predicted", pred, "--measured", meas, "-o", out)
    assert r.returncode == 0, r.stderr
    assert is_png(out)


def test_busbw_needs_input(tmp_path):
    r = run_script("sim_busbw.py", "-o", tmp_path / "x.png")
    assert r.returncode != 0
    assert "--predicted" in r.stderr


def test_scaling_and_crossover(tmp_path):
    scale = write(tmp_path, "scale.json", scale_json())
    for script in ("sim_scaling.py", "sim_crossover.py"):
        out = tmp_path / (script + ".png")
        r = run_script(script, scale, "-o", out)
        assert r.returncode == 0, r.stderr
        assert is_png(out)


def test_scaling_rejects_other_json(tmp_path):
    bad = write(tmp_path, "bad.json", perf_json(True))
    r = run_script("sim_scaling.py", bad, "-o", tmp_path / "x.png")
    assert r.returncode != 0
    assert "rows" in r.stderr


def test_reader_is_tolerant(tmp_path):
    doc = perf_json(False)
    del doc["results"][0]["oop"]  # falls back to ip
    doc["results"][1]["oop"] = {"time": 10.0, "busbw": 0.25}  # "time" for "time_us"
    sizes, times, busbw = sim_common.series(doc)
    assert sizes == [8, 1024, 1 << 20, 64 << 20]
    assert times[1] == 10.0
    assert busbw[1] == 0.25  # as written: never recomputed
    runs = sim_common.load_runs(write(tmp_path, "runs.json", {"runs": [doc, doc]}))
    assert len(runs) == 2


def test_busbw_is_read_never_recomputed(tmp_path):
    assert not hasattr(sim_common, "BUSBW_FACTOR")
    doc = perf_json(True)
    doc["results"][2]["oop"] = {"time_us": 9.0, "algbw": 1.0}  # no busbw: not recomputed from algbw
    with pytest.raises(ValueError, match=r"results\[2\] has no busbw"):
        sim_common.series(doc)
    r = run_script("sim_busbw.py", "--predicted", write(tmp_path, "p.json", doc), "-o", tmp_path / "x.png")
    assert r.returncode == 2
    assert "no busbw" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not any((ROOT / d / "bin" / "cclab-sim").exists() for d in ("build", "build-sim")),
                    reason="cclab-sim is not built")
def test_real_cclab_sim_output(tmp_path):
    exe = next(ROOT / d / "bin" / "cclab-sim" for d in ("build", "build-sim") if (ROOT / d / "bin" / "cclab-sim").exists())
    pred = tmp_path / "pred.json"
    subprocess.run([str(exe), "allreduce", "--topo", "dgx-h100", "--algo", "ring,tree", "-b", "8", "-e", "1M",
                    "-f", "8", "-J", str(pred)], check=True, capture_output=True, timeout=120)
    scale = tmp_path / "scale.json"
    subprocess.run([str(exe), "scale", "--topo", "cluster", "--nodes", "1..4", "--gpus", "8", "-J", str(scale)],
                   check=True, capture_output=True, timeout=120)
    assert run_script("sim_busbw.py", "--predicted", pred, "-o", tmp_path / "a.png").returncode == 0
    assert run_script("sim_scaling.py", scale, "-o", tmp_path / "b.png").returncode == 0
    assert run_script("sim_crossover.py", scale, "-o", tmp_path / "c.png").returncode == 0


def test_scaling_panels_one_per_file(tmp_path):
    a = write(tmp_path, "a.json", scale_json())
    b = write(tmp_path, "b.json", dict(scale_json(), topology="cluster-4nic"))
    out = tmp_path / "panels.png"
    r = run_script("sim_scaling_panels.py", a, b, "--titles", "8 NICs", "4 NICs", "-o", out)
    assert r.returncode == 0, r.stderr
    assert is_png(out)
    r = run_script("sim_scaling_panels.py", a, b, "--titles", "one", "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "2 files" in r.stderr
    bad = write(tmp_path, "bad.json", perf_json(True))
    r = run_script("sim_scaling_panels.py", a, bad, "-o", tmp_path / "y.png")
    assert r.returncode != 0 and "rows" in r.stderr
    assert not (tmp_path / "y.png").exists()
