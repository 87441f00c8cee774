"""plots/claims_rows.py: the figures of scripts/claims' scale rows from small JSON files; bad input gives
one line and exit 2."""
import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "plots" / "claims_rows.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          env=dict(os.environ, MPLBACKEND="Agg"), timeout=120)


def test_links_and_throughput_figures(tmp_path):
    links = {"ranks": [16, 32], "ring": {"busiest": [0.23, 0.24], "root": [0.23, 0.24]},
             "tree": {"busiest": [2.0, 3.0], "root": [2.0, 2.0]}}
    scale = {"presets": {"resnet50": {"workers": [4, 8], "series": {"sync": [1e5, 2e5], "sync straggler": [8e4, 1.6e5]}}}}
    for kind, data in (("links", links), ("throughput", scale)):
        src, out = tmp_path / f"{kind}.json", tmp_path / f"{kind}.png"
        src.write_text(json.dumps(data))
        r = run(kind, src, "-o", out)
        assert r.returncode == 0, r.stderr
        assert out.read_bytes()[:8] == PNG_MAGIC


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"ranks": [1]}))
    for kind, path in (("links", tmp_path / "missing.json"), ("links", bad), ("throughput", wrong)):
        r = run(kind, path, "-o", tmp_path / "x.png")
        assert r.returncode == 2, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("claims_rows.py"), r.stderr
        assert not (tmp_path / "x.png").exists()
