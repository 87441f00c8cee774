"""scripts/validate and its manifest tests/sim/data/validation/systems.json: every public log exists and has
a source, reads with `cclab-sim compare` (exit 0) or is refused exactly where the manifest says so, the
page's numbers are what compare prints, and a broken manifest or a log that stops reading fails."""
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CCLAB_BUILD_DIR", ROOT / "build"))
SIM = BUILD / "bin" / "cclab-sim"
SCRIPT = ROOT / "scripts" / "validate"
MANIFEST = ROOT / "tests" / "sim" / "data" / "validation" / "systems.json"
TRANSPORTS = {"nvlink", "pcie", "ib", "roce", "efa", "tcpx", "tcpxo"}

needs_sim = pytest.mark.skipif(not SIM.is_file(), reason=f"no {SIM} (cmake --build build --target cclab-sim)")


def systems():
    return json.loads(MANIFEST.read_text())["systems"]


def validate(*argv):
    return subprocess.run([str(SCRIPT), "--sim", str(SIM), *map(str, argv)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)


def test_manifest_entries_are_complete_and_sourced():
    entries = systems()
    assert len(entries) >= 12
    names = [e["name"] for e in entries]
    assert len(names) == len(set(names))
    for e in entries:
        assert (ROOT / e["file"]).is_file(), e["file"]
        assert e["source"].startswith("https://github.com/"), e["name"]
        assert e["system"] and e["nccl_version"], e["name"]
        assert e["transport"] in TRANSPORTS, e["name"]
        assert e["sim_args"][:1] == ["--topo"], e["name"]
    kinds = {e["transport"] for e in entries if "refused" not in e}
    assert {"nvlink", "ib", "roce"} <= kinds
    assert kinds & {"efa", "tcpx", "tcpxo"}, "no vendor transport is measured"


@needs_sim
@pytest.mark.parametrize("entry", systems(), ids=lambda e: e["name"])
def test_every_log_reads_or_is_refused_where_the_manifest_says(entry, tmp_path):
    p = subprocess.run([str(SIM), "compare", str(ROOT / entry["file"]), *entry["sim_args"], "-J",
                        str(tmp_path / "c.json")], capture_output=True, text=True, timeout=60, cwd=ROOT)
    if "refused" in entry:
        assert p.returncode == 2 and entry["refused"] in p.stderr, (
            f"{entry['name']} now reads (or fails otherwise): measure it, drop 'refused'\n{p.stderr}")
        return
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    if "run" in entry:
        rows = [r for r in rows if r["run"] == entry["run"]]
    assert rows
    if entry.get("algo"):
        assert {r["algo"] for r in rows} == {entry["algo"]}


@needs_sim
def test_page_of_two_systems_matches_compare(tmp_path):
    page = tmp_path / "validation.md"
    p = validate("--only", "oci-a100-1node,gcp-a3-tcpx-2node", "-o", page, "--date", "2000-01-01",
                 "--json", tmp_path / "v.json")
    assert p.returncode == 0, p.stderr
    text = page.read_text()
    assert "2000-01-01" in text and "scripts/validate" in text
    assert "Systems measured: 2; logs the reader refuses: 0" in text
    row = next(line for line in text.splitlines() if line.startswith("| oci-a100-1node |"))
    # The same numbers as cclab-sim compare's own summary line.
    c = subprocess.run([str(SIM), "compare", str(ROOT / "tests/sim/data/validation/oci-a100-1node.txt"), "--topo",
                        "dgx-a100"], capture_output=True, text=True, timeout=60)
    factor, ratio = map(float, re.search(r"error factor x([\d.]+).*predicted/measured x([\d.]+)", c.stdout).groups())
    assert f"**{(factor - 1) * 100:.0f}% (x{ratio:.2f}, 2)**" in row
    got = json.loads((tmp_path / "v.json").read_text())
    assert math.isclose(got[0]["overall"]["error_factor"], factor, rel_tol=1e-3)
    assert got[0]["ranges"]["<= 64 KiB"] is None and got[0]["ranges"][">= 16 MiB"]["rows"] == 2
    assert got[1]["ok"] and got[1]["overall"]["rows"] == 28  # the TCPX log, read since tables posted alone are


@needs_sim
def test_a_log_that_stops_reading_or_a_bad_manifest_fails(tmp_path):
    data = json.loads(MANIFEST.read_text())
    entry = dict(next(e for e in data["systems"] if e["name"] == "oci-a100-1node"))
    bad = tmp_path / "bad.txt"
    bad.write_text("not an nccl-tests log\n")
    entry["file"] = str(bad)  # absolute: ROOT / it is it
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"systems": [entry]}))
    p = validate("--manifest", manifest, "-o", tmp_path / "p.md")
    assert p.returncode == 1 and "expected a read" in p.stderr
    del entry["source"]
    manifest.write_text(json.dumps({"systems": [entry]}))
    p = validate("--manifest", manifest, "-o", tmp_path / "q.md")
    assert p.returncode == 2 and "has no 'source'" in p.stderr
    assert not (tmp_path / "q.md").exists()
    p = validate("--only", "nosuchsystem", "-o", tmp_path / "r.md")
    assert p.returncode == 2


def test_committed_page_lists_every_system():
    text = (ROOT / "docs" / "results" / "validation.md").read_text()
    assert "scripts/validate" in text
    for e in systems():
        assert f"**{e['name']}**" in text, e["name"]
        assert e["source"] in text, e["name"]
