"""scripts/claims --quick: runs every claim's experiments in under a minute and writes the table with
one row per claim (and the figures of rows 7-9 next to it): claim | commands | measured/predicted | holds? | why (threshold)."""
import os
import re
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CCLAB_BUILD_DIR", ROOT / "build"))
SCRIPT = ROOT / "scripts" / "claims"
CLAIMS = 9
FIGURES = ("claims_gradients.png", "claims_links.png", "claims_throughput.png")  # rows 7-9
QUICK_BUDGET_S = 60


def split_row(line):
    cells = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in cells[1:-1]]


def test_quick_run_writes_one_checked_row_per_claim(tmp_path):
    out = tmp_path / "claims.md"
    t0 = time.monotonic()
    p = subprocess.run([str(SCRIPT), "--quick", "--build", str(BUILD), "-o", str(out), "--keep", str(tmp_path / "work")],
                       capture_output=True, text=True, timeout=5 * QUICK_BUDGET_S)
    elapsed = time.monotonic() - t0
    assert p.returncode == 0, p.stderr
    assert elapsed < QUICK_BUDGET_S, f"--quick took {elapsed:.0f} s"
    lines = out.read_text().splitlines()
    header = [i for i, l in enumerate(lines) if l.startswith("| claim |")]
    assert len(header) == 1
    assert split_row(lines[header[0]]) == ["claim", "what we ran", "measured / predicted", "holds?", "why (threshold)"]
    rows = [split_row(l) for l in lines[header[0] + 2:] if l.startswith("|")]
    assert len(rows) == CLAIMS
    for claim, ran, measured, holds, why in rows:
        commands = re.findall(r"`([^`]+)`", ran)
        assert commands, claim
        for c in commands:
            assert re.match(r"\S*bin/(cclab-train|all_reduce_perf|cclab-sim) ", c), c
        assert re.search(r"\d", measured), claim  # numbers, measured or predicted
        assert holds in ("yes", "no", "partly"), holds
        assert "threshold" in why, claim
    # every tool was used, and every JSON file named in a command was written
    ran_all = " ".join(r[1] for r in rows)
    for tool in ("cclab-train", "all_reduce_perf", "cclab-sim"):
        assert tool in ran_all
    for name in re.findall(r"\$OUT/([\w.\-]+)", ran_all):
        assert (tmp_path / "work" / name).is_file(), name
    # every figure a row names was drawn next to the table
    measured_all = " ".join(r[2] for r in rows)
    for fig in FIGURES:
        assert f"Figure: {fig}" in measured_all, fig
        assert (tmp_path / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", fig


def test_bad_usage_exits_two(tmp_path):
    p = subprocess.run([str(SCRIPT), "--bogus"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    p = subprocess.run([str(SCRIPT), "--quick", "--build", str(tmp_path), "-o", str(tmp_path / "c.md")],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert "missing" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "c.md").exists()
