"""plots/sim_compare.py: cclab-sim compare -J in, PNG out; bad input fails with a clear message."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "plots" / "sim_compare.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_script(*args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


def compare_json(n=6):
    rows = []
    for i in range(n):
        size = 8 << (3 * i)
        measured = 20.0 + size / 2e5
        predicted = 15.0 + size / 2.5e5
        for ip in (False, True):
            rows.append({"file": "log.txt", "run": 0, "collective": "allreduce", "nranks": 16, "size": size, "type": "float",
                         "in_place": ip, "measured_us": measured, "predicted_us": predicted,
                         "rel_error": (predicted - measured) / measured, "algo": "ring", "protocol": "simple",
                         "dominant": "latency" if i < 3 else "bandwidth", "latency_us": 15.0, "bandwidth_us": size / 2.5e5,
                         "reduction_us": 0.0})
    return {"command": "compare", "topology": "cluster", "nranks": 16, "model": "analytic", "files": ["log.txt"],
            "skipped_rows": 0, "rows": rows, "summary": [{"collective": "allreduce", "rows": 2 * n}]}


def test_writes_a_png_for_either_column(tmp_path):
    src = tmp_path / "cmp.json"
    src.write_text(json.dumps(compare_json()))
    for extra in ([], ["--in-place"]):
        out = tmp_path / f"cmp{len(extra)}.png"
        r = run_script(src, "-o", out, *extra)
        assert r.returncode == 0, r.stderr
        assert out.read_bytes()[:8] == PNG_MAGIC


def test_bad_input_is_refused_in_one_line(tmp_path):
    cases = {
        "not.json": "{",
        "other.json": json.dumps({"command": "scale", "rows": []}),
        "empty.json": json.dumps({"command": "compare", "rows": []}),
        "lacking.json": json.dumps({"command": "compare", "rows": [{"size": 8}]}),
        "negative.json": json.dumps(dict(compare_json(1), rows=[dict(compare_json(1)["rows"][0], measured_us=-1)])),
    }
    for name, text in cases.items():
        src = tmp_path / name
        src.write_text(text)
        r = run_script(src, "-o", tmp_path / "x.png")
        assert r.returncode == 2, (name, r.stderr)
        assert "sim_compare.py" in r.stderr and r.stderr.strip().count("\n") == 0, (name, r.stderr)
        assert not (tmp_path / "x.png").exists()
