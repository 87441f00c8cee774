"""scripts/gpu_train_check: the stage it makes fits the device tool, and its rehearsal (the same commands on
the host backend) trains at every worker count and runs the GPUs-in-processes ring with #wrong 0."""
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CCLAB_BUILD_DIR", ROOT / "build"))
SCRIPT = ROOT / "scripts" / "gpu_train_check"


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    if not (BUILD / "bin" / "cclab-train").exists():
        pytest.fail(f"build first: {BUILD}/bin/cclab-train is missing")
    if subprocess.run([str(ROOT / "scripts" / "find_mpirun"), str(BUILD)], capture_output=True).returncode != 0:
        pytest.skip("no mpirun here: the stage carries this machine's OpenMPI")
    tmp = tmp_path_factory.mktemp("gtc")
    stage = subprocess.run([str(SCRIPT), "--stage", str(BUILD)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert stage.returncode == 0, stage.stderr
    tarball = ROOT / "stage" / "gpu-train.tar.xz"
    assert tarball.stat().st_size < 48 << 20  # room beside the working tree in the device tool's 64 MiB
    out = tmp / "out"
    p = subprocess.run([str(SCRIPT), "--rehearse", str(tarball)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OUT=str(out)))
    return p, out


def test_every_training_run_reports_a_row(rehearsal):
    p, out = rehearsal
    assert p.returncode == 0, p.stderr
    summary = (out / "summary.txt").read_text()
    assert "FAILED" not in summary, summary
    for name, workers in [("w1", 1), ("w2", 2), ("w4", 4), ("w8", 8), ("w8_straggler", 8), ("w8_small", 8)]:
        row = re.search(rf"^  {name} +{workers} +(\d+) +(\d+) +([\d.]+)", summary, re.M)
        assert row, (name, summary)
        assert int(row.group(1)) > 0 and int(row.group(2)) > 0
    # The slow rank's run is compared with the same run without it (its size depends on the cores: with
    # 8 workers on 2 cores the slow rank's extra compute overlaps the others' turns, so only presence).
    assert re.search(r"^  w8_straggler .* \d+\.\d{3}x ", summary, re.M), summary
    # At most 8 files come back from the device machine: the -J files travel as one archive.
    assert len(list(out.iterdir())) <= 8, sorted(p.name for p in out.iterdir())
    with tarfile.open(out / "train_json.tar.gz") as t:
        assert {"train_w1.json", "train_w8.json", "train_w8_straggler.json"} <= set(t.getnames())


def test_processes_ring_is_checked_at_every_count(rehearsal):
    _, out = rehearsal
    summary = (out / "summary.txt").read_text()
    for np in (2, 4, 8):
        line = re.search(rf"^  np {np}: (.*)$", summary, re.M)
        assert line and "FAILED" not in line.group(1), summary
        assert line.group(1).count("#wrong 0") == 6, line.group(1)


def test_bad_usage_exits_2():
    p = subprocess.run([str(SCRIPT), "/nonexistent.tar.xz"], capture_output=True, text=True)
    assert p.returncode == 2 and "usage" in p.stderr
