"""scripts/results and scripts/latency_medians: every results page is regenerable by a named set, bad
sets are refused with one line and exit 2, and the 8-byte latency table of docs/results/cpu-peers.md
is what scripts/latency_medians computes from the rounds committed under docs/results/data/."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "scripts" / "results"
MEDIANS = ROOT / "scripts" / "latency_medians"
PAGES = ROOT / "docs" / "results"
ROUNDS = PAGES / "data" / "cpu-peers-latency-final"


def run(argv):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=60, cwd=ROOT)


def listed_sets():
    p = run([RESULTS, "--list"])
    assert p.returncode == 0, p.stderr
    sets = {}
    for line in p.stdout.splitlines():
        name, page = line.split()[:2]
        sets[name] = page
    return sets


def test_every_results_page_has_a_set_and_every_set_a_page():
    sets = listed_sets()
    assert len(sets) >= 8
    for name, page in sets.items():
        assert (ROOT / page).is_file(), f"set {name}: {page} does not exist"
    pages = {f"docs/results/{p.name}" for p in PAGES.glob("*.md")}
    assert pages <= set(sets.values()), f"no set regenerates {sorted(pages - set(sets.values()))}"


def test_every_set_has_a_runner():
    text = RESULTS.read_text()
    for name in listed_sets():
        runner = "run_" + name.replace("-", "_")
        assert re.search(rf"^{runner}\(\) {{", text, re.M), f"set {name} has no {runner}()"
        assert re.search(rf"^\s+{re.escape(name)}\) {runner} ;;", text, re.M), f"set {name} is not dispatched"


def test_all_runs_every_set_in_list_order():
    p = run([RESULTS, "--dry-run", "all"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == list(listed_sets())
    p = run([RESULTS, "--dry-run", "micro", "cpu-peers"])
    assert p.stdout.split() == ["micro", "cpu-peers"]


def test_bad_sets_and_options_are_refused_with_one_line():
    for argv in (["nosuchset"], ["--nosuchflag"], ["cpu-peers", "nosuchset"]):
        p = run([RESULTS, *argv])
        assert p.returncode == 2, argv
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert p.stdout == ""
    p = run([RESULTS])
    assert p.returncode == 2 and "--list" in p.stderr


def medians(files):
    p = run([MEDIANS, *files])
    assert p.returncode == 0, p.stderr
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\| (\d+) \| (.+?) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (.*) \|$", line)
        if m:
            out[(int(m[1]), m[2])] = (m[3], m[4], m[5], m[6].strip())
    return out


def page_latency_table():
    """{implementation: [2 bound, 2 unbound, 2 range, 4 bound, 4 unbound, 4 range]} of cpu-peers.md."""
    lines = (PAGES / "cpu-peers.md").read_text().splitlines()
    start = lines.index("| implementation | 2 ranks bound | unbound | (range) | 4 ranks bound | unbound | (range) |")
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.replace("**", "").strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


# The page's names for the implementations of compare_peers' comparison.md.
PAGE_NAMES = {
    "host ring (group call `-g`)": "cclab host ring",
    "host rd": "cclab host rd",
    "host oneshot": "cclab host oneshot",
    "host auto (group call)": "cclab host auto",
    "host auto, a thread per rank (`-t`)": "cclab host auto, thread per rank (-t)",
    "OpenMPI `MPI_Allreduce`": "OpenMPI MPI_Allreduce",
    "proc ring": "cclab proc ring (processes)",
    "proc auto": "cclab proc auto (processes)",
    "Gloo ring": "Gloo ring",
}


def test_cpu_peers_latency_table_is_the_medians_of_the_committed_rounds():
    bound = medians(sorted(ROUNDS.glob("bound-*.md")))
    unbound = medians(sorted(ROUNDS.glob("unbound-*.md")))
    both = medians(sorted(ROUNDS.glob("*.md")))
    table = page_latency_table()
    assert set(table) == set(PAGE_NAMES)
    for shown, name in PAGE_NAMES.items():
        for i, ranks in ((0, 2), (3, 4)):
            b, u, rng = table[shown][i:i + 3]
            assert b == bound[(ranks, name)][0], (shown, ranks)
            assert u == unbound[(ranks, name)][0], (shown, ranks)
            lo, hi = (x.replace("–", "-") for x in rng.split("–"))
            assert (lo, hi) == both[(ranks, name)][1:3], (shown, ranks)
    # the per-round target counts the page states
    assert both[(2, "cclab host auto")][3] == "22 of 22"
    assert both[(4, "cclab host auto")][3] == "22 of 22"
    assert both[(2, "cclab proc auto (processes)")][3] == "20 of 22"


def test_latency_medians_refuses_a_file_without_the_table(tmp_path):
    bad = tmp_path / "comparison.md"
    bad.write_text("# not a comparison\n")
    p = run([MEDIANS, bad])
    assert p.returncode == 2
    assert p.stderr.startswith("latency_medians: error:") and len(p.stderr.splitlines()) == 1
    assert run([MEDIANS]).returncode == 2


def test_gpu_h200_tables_are_what_compare_py_makes_of_the_committed_runs():
    p = subprocess.run(["python3", str(PAGES / "data" / "gpu-h200" / "compare.py")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() in (PAGES / "gpu-h200.md").read_text()
