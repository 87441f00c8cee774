"""plots/bandwidth.py: synthetic *_perf JSON in, PNG out; bad input gives one clear error line."""
import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "plots" / "bandwidth.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def report(backend="host", algo="ring", nranks=4, sizes=(8, 1024, 1 << 20, 64 << 20), types=("float",)):
    results = []
    for t in types:
        for s in sizes:
            m = {"time_us": 5.0 + s / 4e3, "algbw": s / (5.0 + s / 4e3) / 1e3, "busbw": 1.5 * s / (5.0 + s / 4e3) / 1e3,
                 "wrong": 0}
            results.append({"size": s, "count": s // 4, "type": t, "redop": "sum", "root": -1, "oop": m, "ip": m})
    return {"collective": "allreduce", "backend": backend, "algo": algo, "nranks": nranks, "type": types[0],
            "op": "sum", "machine": {"hostname": "h", "cpu": "c", "cpus": 2}, "date": "2024-01-01T00:00:00Z",
            "command": "all_reduce_perf", "results": results, "avg_busbw": 1.0}


def run(*args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_writes_a_png_from_several_reports(tmp_path):
    a = write(tmp_path, "ring.json", report())
    b = write(tmp_path, "mpi.json", report(backend="mpi", algo="MPI_Allreduce"))
    c = write(tmp_path, "all.json", report(algo="tree", types=("float", "int8")))
    out = tmp_path / "bw.png"
    r = run(a, b, c, "-o", out, "--title", "test")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_labels_and_in_place(tmp_path):
    a = write(tmp_path, "ring.json", report())
    out = tmp_path / "ip.png"
    r = run(a, "-o", out, "--label", "ours", "--placement", "ip")
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 1000


def test_missing_file_is_one_clear_error(tmp_path):
    r = run(tmp_path / "nope.json", "-o", tmp_path / "x.png")
    assert r.returncode != 0
    assert "nope.json" in r.stderr and "error" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


def test_not_json_and_wrong_schema_are_errors(tmp_path):
    bad_json = write(tmp_path, "bad.json", "{not json")
    no_results = write(tmp_path, "empty.json", {"backend": "host", "algo": "ring", "nranks": 2, "results": []})
    no_keys = write(tmp_path, "keys.json", {"hello": 1})
    bad_row = write(tmp_path, "row.json", {"backend": "host", "algo": "ring", "nranks": 2, "results": [{"size": 8}]})
    for path, words in ((bad_json, "not JSON"), (no_results, "no results"), (no_keys, "no 'backend'"),
                        (bad_row, "results[0]")):
        r = run(path, "-o", tmp_path / "x.png")
        assert r.returncode != 0, path
        assert words in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_output_is_required(tmp_path):
    r = run(write(tmp_path, "ring.json", report()))
    assert r.returncode == 2
    assert "-o" in r.stderr
