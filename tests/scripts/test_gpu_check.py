"""scripts/gpu_check rehearsed on the CPU: the same script, steps, budget, summary and archive as on a
GPU machine, with stand-ins for the GPU-only steps. Checks what the one shot on a device depends on:
exit status, at most 8 files in $OUT (the device returns no more), a summary with every cell filled,
the budget honoured when tiny, a GPU test that cannot run failing the check, bad usage refused; and
each way the shot could be wasted or misreport: a stand-in all_reduce_perf that hangs (cut at its
limit, the rest of its ordering skipped and listed), one that answers a wrong sum at the headline size
(#wrong reported, the target not met), a missing library and too old a glibc (preflight blockers), the
follow-up redoing what the last run left."""
import os
import re
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CCLAB_BUILD_DIR", ROOT / "build"))
SCRIPT = ROOT / "scripts" / "gpu_check"
MAX_FILES_BACK = 8  # what the device machine returns from $OUT


def rehearse(tmp_path, *args, env=None, timeout=600, build=None):
    out = tmp_path / "out"
    e = dict(os.environ, OUT=str(out), GPU_CHECK_STATE=str(tmp_path / "state"), **(env or {}))
    t0 = time.monotonic()
    p = subprocess.run([str(SCRIPT), "--rehearse", *args, str(build or BUILD)], env=e, capture_output=True, text=True,
                       timeout=timeout)
    return p, out, time.monotonic() - t0


def table_rows(summary):
    rows = []
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["K", "algo", "order"])
    for line in lines[start + 1:]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    if not (BUILD / "bin" / "all_reduce_perf").exists():
        pytest.fail(f"build first: {BUILD}/bin/all_reduce_perf is missing")
    return rehearse(tmp_path_factory.mktemp("rehearsal"))


def test_rehearsal_passes_and_returns_three_files(full_run):
    p, out, _ = full_run
    assert p.returncode == 0, p.stderr[-3000:]
    files = sorted(f.name for f in out.iterdir())
    assert files == ["gpu_check.log", "gpu_check_files.tar.gz", "summary.txt"]
    assert len(files) <= MAX_FILES_BACK
    assert "gpu_check: passed" in p.stderr
    with tarfile.open(out / "gpu_check_files.tar.gz") as tar:
        names = tar.getnames()
    assert any(re.search(r"perf_k2_ring_events\.json$", n) for n in names), names
    assert any(re.search(r"check_k2_rd_ll\.json$", n) for n in names), names
    assert any(re.search(r"check_k2_hier-c4_events\.json$", n) for n in names), names
    assert sum(1 for n in names if n.endswith(".out")) >= 40, "every step keeps its output"


def test_summary_has_every_cell_filled(full_run):
    p, out, _ = full_run
    summary = (out / "summary.txt").read_text()
    assert summary == p.stdout, "the summary printed is the one saved"
    rows = table_rows(summary)
    algos = {r[1] for r in rows}
    orders = {r[2] for r in rows}
    assert algos == {"ring", "tree", "dbtree", "rhd", "rd", "auto"}
    assert orders == {"events", "graph", "ll"}
    for r in rows:
        assert len(r) == 9, r
        assert "-" not in r, f"missing figure in {r}"
        float(r[3]), float(r[4]), float(r[5]), float(r[6])  # measured numbers, not placeholders
    ring = [r for r in rows if r[1] == "ring"]
    assert all(re.fullmatch(r"\d+%", r[8]) for r in ring), ring
    # 6 algorithms x 3 orders, and the plan-v2 checks: 6 algorithms (ring, tree, dbtree, hier, oneshot,
    # twoshot) x channels {1, 4} (one order here), and the checked headline: ring x events and ring x ll
    # at the size the targets read
    assert re.search(r"^#wrong: all 0 over 32 checked runs", summary, re.M), summary
    assert re.search(r"^  K=2 ring events: #wrong 0, busbw \d+\.\d GB/s", summary, re.M), summary
    assert re.search(r"^  K=2 ring ll: #wrong 0, busbw \d+\.\d GB/s", summary, re.M), summary
    assert re.search(r"^targets .*: (met|MISSED)\).*: (met|MISSED)\)$", summary, re.M), summary
    assert re.search(r"^copy ceiling .*memcpy \d+\.\d GB/s", summary, re.M)
    assert re.search(r"^straggler 1ms .*: 8B \d+\.\d us", summary, re.M)
    assert re.search(r"nccl_k2 +ok .*refused as expected", summary), "an expected refusal passes its step"
    assert re.search(r"trainer_cublas_test +ok", summary), "the cuBLAS path's stand-in ran"
    assert re.search(r"cublas_memcheck +ok", summary), summary
    for line in summary.splitlines():
        if line.startswith(("straggler", "nccl K=1", "targets")):
            assert " - " not in line and not line.endswith(" -"), line


def test_tiny_budget_is_honoured_and_says_what_it_skipped(tmp_path):
    budget = 4
    p, out, elapsed = rehearse(tmp_path, "--budget", str(budget))
    assert p.returncode == 3, (p.returncode, p.stderr[-2000:])
    # A step started before the budget ran out is cut at the budget (timeout -k 10 at most).
    assert elapsed < budget + 25, elapsed
    summary = (out / "summary.txt").read_text()
    assert re.search(r"skipped +0 s +budget spent", summary), summary
    assert "result: INCOMPLETE" in summary
    assert len(list(out.iterdir())) <= MAX_FILES_BACK


def test_gpus_in_processes_steps_run_under_mpirun(full_run):
    # --backend cuda under mpirun on the host stand-in device: one process per virtual rank, and hier
    # over emulated nodes (pinned staging + MPI); a step passes only with #wrong 0.
    p, out, _ = full_run
    summary = (out / "summary.txt").read_text()
    if "mpirun absent" in summary:
        pytest.skip("no mpirun here: the steps skip, saying so (test_find_mpirun_says_why_it_finds_none)")
    assert re.search(r"procs_k2_ring +ok", summary), summary
    assert re.search(r"procs_k2_hier_nodes_of_1 +ok", summary), summary
    with tarfile.open(out / "gpu_check_files.tar.gz") as t:
        names = t.getnames()
    assert any(n.endswith("procs_k2_ring.json") for n in names), names
    assert any(n.endswith("procs_k2_hier.json") for n in names), names


def test_gpus_in_processes_steps_leave_the_stand_in_knob_unset_on_a_gpu(tmp_path):
    # On a GPU the processes must not see CCLAB_CUDA_PROC_STANDIN at all: an empty value is a malformed
    # knob that every rank refuses (exit 2), which failed both steps on the first H200 run. Launched as
    # on a GPU (GPU_CHECK_PROC_STANDIN empty), a stand-in reports whether the variable reached a rank.
    if subprocess.run([str(FIND_MPIRUN), str(BUILD)], capture_output=True).returncode != 0:
        pytest.skip("no mpirun here")
    body = '''case "$GPU_CHECK_STEP" in procs_*)
  if [ -n "${CCLAB_CUDA_PROC_STANDIN+set}" ]; then echo "stand-in: CCLAB_CUDA_PROC_STANDIN='$CCLAB_CUDA_PROC_STANDIN' reached a rank"; exit 2; fi
  exit 0 ;;
esac'''
    env = dict(stand_in(tmp_path, body), GPU_CHECK_PROC_STANDIN="")
    p, out, _ = rehearse(tmp_path, "--only", "procs_*", env=env, timeout=300)
    summary = (out / "summary.txt").read_text()
    assert re.search(r"procs_k2_ring +ok", summary), summary + (out / "gpu_check.log").read_text()[-3000:]
    assert re.search(r"procs_k2_hier_nodes_of_1 +ok", summary), summary


FIND_MPIRUN = ROOT / "scripts" / "find_mpirun"


def test_find_mpirun_says_why_it_finds_none(tmp_path):
    # What the GPU machines look like (no OpenMPI, none staged): exit 1 and the reason, which the
    # check records as its skipped steps' note.
    p = subprocess.run([str(FIND_MPIRUN), str(tmp_path)], env=dict(os.environ, GPU_CHECK_MPIRUN="none"),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert p.stdout.startswith("mpirun absent:"), p.stdout
    p = subprocess.run(["/bin/bash", str(FIND_MPIRUN), str(tmp_path)], env=dict(os.environ, PATH="/nonexistent"),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert "not installed on this machine and not staged in" in p.stdout, p.stdout
    tools = tmp_path / "tools"  # a PATH with what the script uses, but no mpirun
    tools.mkdir()
    (tools / "timeout").symlink_to(subprocess.run(["sh", "-c", "command -v timeout"], capture_output=True, text=True).stdout.strip())
    staged = tmp_path / "openmpi" / "bin"
    staged.mkdir(parents=True)
    (staged / "mpirun").write_text("#!/bin/sh\necho 'mpirun: cannot load libevent' >&2\nexit 127\n")
    (staged / "mpirun").chmod(0o755)
    p = subprocess.run(["/bin/bash", str(FIND_MPIRUN), str(tmp_path)], env=dict(os.environ, PATH=str(tools)),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1, p.stdout
    assert "does not run here: mpirun: cannot load libevent" in p.stdout, p.stdout
    (staged / "mpirun").write_text("#!/bin/sh\necho \"mpirun (Open MPI) $OPAL_PREFIX\"\n")
    p = subprocess.run(["/bin/bash", str(FIND_MPIRUN), str(tmp_path)], env=dict(os.environ, PATH=str(tools)),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stdout
    assert p.stdout.strip() == str(staged / "mpirun")


def test_staged_openmpi_runs_the_gpu_processes_step_without_the_system_one(tmp_path):
    # What the GPU machine gets: scripts/gpu_stage carries this machine's OpenMPI; with the system's
    # OpenMPI hidden (a private mount namespace), the staged one found by find_mpirun runs
    # all_reduce_perf --backend cuda under mpirun (host stand-in device), #wrong 0.
    if subprocess.run(["sh", "-c", "command -v mpirun && unshare -m --propagation private true"],
                      capture_output=True).returncode != 0:
        pytest.skip("needs mpirun here and unshare -m (root) to hide it")
    if not (BUILD / "tests" / "cuda_backend_test").exists():
        pytest.skip("built without CUDA: gpu_stage has nothing to stage")
    into = tmp_path / "stage"
    p = subprocess.run([str(STAGE), str(BUILD), "--into", str(into)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert (into / "openmpi" / "bin" / "mpirun").exists(), p.stderr
    hide = '''set -e; e=$(mktemp -d)
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi; do mount --bind "$e" "$d"; done
for f in /usr/bin/orted /usr/bin/orterun $(readlink -f /usr/lib/x86_64-linux-gnu/libmpi.so.40) \
         $(readlink -f /usr/lib/x86_64-linux-gnu/libopen-pal.so.40) $(readlink -f /usr/lib/x86_64-linux-gnu/libpmix.so.2); do
  mount --bind /dev/null "$f"; done
! /usr/bin/orterun --version >/dev/null 2>&1   # hidden
m=$(scripts/find_mpirun "$1"); p=$(cd "$1/openmpi" && pwd)
export OPAL_PREFIX=$p PMIX_INSTALL_PREFIX=$p/lib/x86_64-linux-gnu/pmix2 LD_LIBRARY_PATH=$1/lib:$p/lib CCLAB_CUDA_PROC_STANDIN=host
"$m" --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x CCLAB_CUDA_PROC_STANDIN -np 2 \
  "$1/bin/all_reduce_perf" --backend cuda -b 8 -e 64K -f 8 -w 1 -n 2'''
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", hide, "_", str(into)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    assert "Out of bounds values : 0 OK" in p.stdout, p.stdout[-2000:]
    assert "2 ranks as processes" in p.stdout


def test_a_gpu_test_that_cannot_run_fails_the_check(tmp_path):
    if not (BUILD / "tests" / "cuda_backend_test").exists():
        pytest.skip("built without CUDA: no GPU test binary to run")
    if subprocess.run(["sh", "-c", "nvidia-smi -L 2>/dev/null | grep -q ^GPU"]).returncode == 0:
        pytest.skip("a GPU is present here: its tests would run, not fail")
    p, out, _ = rehearse(tmp_path, "--budget", "10", env={"GPU_CHECK_REHEARSE_REAL_GPU_TESTS": "1"})
    assert p.returncode == 1, p.stderr[-2000:]
    summary = (out / "summary.txt").read_text()
    assert re.search(r"cuda_backend_test +FAILED", summary), summary
    assert "result: FAILED" in summary
    log = (out / "gpu_check.log").read_text()
    assert "expected (CCLAB_EXPECT_GPU=1) but unavailable" in log
    assert re.search(r"cublas_gpu_test +FAILED", summary) or "budget spent" in summary, summary


@pytest.mark.parametrize("args", [["--budget", "0"], ["--budget", "x"], ["--frobnicate"], ["a", "b"]])
def test_bad_usage_exits_2(tmp_path, args):
    p = subprocess.run([str(SCRIPT), "--rehearse", *args], env=dict(os.environ, OUT=str(tmp_path / "o")),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, (args, p.stderr)
    assert p.stderr.strip(), "says why"


STAGE = ROOT / "scripts" / "gpu_stage"
CARRY_LIMIT = 64 << 20  # what the device tool carries


def test_stage_holds_exactly_what_the_check_needs(tmp_path):
    if not (BUILD / "tests" / "cuda_backend_test").exists():
        pytest.skip("built without CUDA: nothing to stage")
    into = tmp_path / "stage"
    p = subprocess.run([str(STAGE), str(BUILD), "--into", str(into)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    files = sorted(str(f.relative_to(into)) for f in into.rglob("*") if f.is_file())
    wanted = ["MANIFEST.txt", "bin/all_reduce_perf", "bin/cuda_copy_bw", "tests/cublas_gpu_test",
              "tests/cuda_backend_test", "tests/cuda_host_logic_test", "tests/nccl_backend_test"]
    assert [f for f in files if not f.startswith(("lib/", "openmpi/"))] == wanted
    assert sum(f.stat().st_size for f in into.rglob("*") if f.is_file()) <= CARRY_LIMIT
    manifest = (into / "MANIFEST.txt").read_text()
    assert "cuda_backend_test: ptx_90, sm_90" in manifest, manifest
    assert "cublas_gpu_test: ptx_90, sm_90" in manifest, manifest
    assert re.search(r"GLIBC_2\.\d+ GLIBCXX_3\.4\.\d+", manifest)
    assert re.search(r"^# scripts/gpu_stage .*, commit [0-9a-f]{7,}(-dirty)?$", manifest, re.M), manifest
    for command in (f"scripts/gpu_check --preflight {into}", f"scripts/gpu_check --budget 330 {into}",
                    f"scripts/gpu_check --follow-up --budget 150 {into}"):
        assert command in p.stdout, p.stdout
    # The preflight reads the stage (every binary, lib/, openmpi/) and returns the manifest with its lines.
    out = tmp_path / "out"
    pf = subprocess.run([str(SCRIPT), "--rehearse", "--preflight", str(into)], env=dict(os.environ, OUT=str(out)),
                        capture_output=True, text=True, timeout=120)
    assert pf.returncode == 0, pf.stdout + pf.stderr
    assert sorted(f.name for f in out.iterdir()) == ["MANIFEST.txt", "preflight.txt"]
    assert (out / "MANIFEST.txt").read_text() == manifest
    assert re.search(r"^ok +symbols: +\d+ files need at most GLIBC_2\.\d+ GLIBCXX_3\.4\.\d+", pf.stdout, re.M), pf.stdout
    for f in files:  # every library a staged binary needs resolves (here; lib/ travels with them)
        if f.startswith(("bin/", "tests/")):
            ldd = subprocess.run(["ldd", str(into / f)], capture_output=True, text=True,
                                 env=dict(os.environ, LD_LIBRARY_PATH=str(into / "lib"))).stdout
            assert "not found" not in ldd, (f, ldd)


def test_stage_refuses_a_build_without_cuda(tmp_path):
    p = subprocess.run([str(STAGE), str(tmp_path), "--into", str(tmp_path / "s")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2
    assert "missing" in p.stderr and "build with CUDA" in p.stderr


@pytest.mark.parametrize("topo", ["h200-virtual", "h200-graph", "h200-ll"])
def test_h200_prediction_topologies_replay(topo):
    """docs/results/gpu-h200-predicted.md rests on these files: they must keep parsing and replaying."""
    sim = BUILD / "bin" / "cclab-sim"
    p = subprocess.run([str(sim), "allreduce", "--topo", str(ROOT / "sim" / "topologies" / f"{topo}.json"), "-g", "8",
                        "-b", "8", "-e", "1M"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^\s+1048576\s", p.stdout, re.M), p.stdout[-2000:]


STEP_SECONDS = 6  # every step's limit in the hang tests: the stand-in's hang costs this, the real steps take ~1 s


def stand_in(tmp_path, body):
    """An all_reduce_perf stand-in (GPU_CHECK_PERF): a shell script that sees the step's name in
    $GPU_CHECK_STEP and runs the real binary ($REAL) unless BODY decides otherwise."""
    path = tmp_path / "perf_stand_in"
    path.write_text(f"#!/bin/bash\nREAL={BUILD / 'bin' / 'all_reduce_perf'}\n{body}\nexec \"$REAL\" \"$@\"\n")
    path.chmod(0o755)
    return {"GPU_CHECK_PERF": str(path)}


def steps_of(summary):
    return {m.group(1): (m.group(2), m.group(3)) for m in
            re.finditer(r"^  (\S+) +(ok|FAILED|skipped|cut) +\d+ s  (.*)$", summary, re.M)}


@pytest.mark.parametrize("how", ["hangs", "reports"])
def test_an_ordering_that_times_out_is_cut_and_its_other_steps_skipped(tmp_path, how):
    # "hangs": the process never returns (a kernel that ignores its deadline): killed at the step's
    # limit. "reports": the collective's own bound fires (TimeoutError naming the late rank).
    body = {"hangs": 'case "$GPU_CHECK_STEP" in *_ll) exec sleep 600 ;; esac',
            "reports": 'case "$GPU_CHECK_STEP" in *_ll) echo "all_reduce_perf: error: cuda ll: rank 0 timed out '
                       'waiting for rank 1 to start (device 0)" >&2; exit 1 ;; esac'}[how]
    env = dict(stand_in(tmp_path, body), GPU_CHECK_MAX_STEP_SECONDS=str(STEP_SECONDS))
    p, out, elapsed = rehearse(tmp_path, "--only", "check_k2_ring_*,check_k2_rd_*,headline_*", env=env)
    assert p.returncode == 1, p.stderr[-2000:]
    summary = (out / "summary.txt").read_text()
    steps = steps_of(summary)
    first = steps["check_k2_ring_ll"]
    assert first[0] == "FAILED", summary
    assert (f"timed out after {STEP_SECONDS}s" if how == "hangs" else "timed out: all_reduce_perf: error: cuda ll: rank 0") in first[1]
    for name in ("check_k2_rd_ll", "headline_k2_ring_ll"):
        assert steps[name] == ("skipped", "ordering ll timed out in check_k2_ring_ll"), summary
    assert ("ordering ll timed out in check_k2_ring_ll: 2 step(s) of it skipped: check_k2_rd_ll headline_k2_ring_ll"
            in summary), summary
    assert re.search(r"K=2 ring events: #wrong 0", summary), "the other orderings still ran"
    assert "check_k2_rd_graph" not in steps and "check_k2_rd_events" not in steps, "they passed"
    assert "result: FAILED" in summary
    assert elapsed < 120, elapsed


def test_a_wrong_sum_at_the_headline_size_is_reported_and_the_target_missed(tmp_path):
    # The stand-in answers the ring x events headline run with 5 wrong elements (in and out of place)
    # at the size the bandwidth target reads, and exits 1 as all_reduce_perf does on #wrong.
    body = '''if [ "$GPU_CHECK_STEP" = headline_k2_ring_events ]; then
  "$REAL" "$@" || exit $?
  json=""; prev=""; for a in "$@"; do [ "$prev" = -J ] && json=$a; prev=$a; done
  python3 - "$json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["results"]:
    for side in ("oop", "ip"):
        r[side]["wrong"] = 5
json.dump(j, open(sys.argv[1], "w"))
PY
  echo "# Out of bounds values : 10 FAILED"; exit 1
fi'''
    p, out, _ = rehearse(tmp_path, "--only", "copy_bw,check_k2_auto_ll,headline_*,perf_k2_ring_events,perf_k2_auto_ll",
                         env=stand_in(tmp_path, body))
    assert p.returncode == 1, p.stderr[-2000:]
    summary = (out / "summary.txt").read_text()
    assert steps_of(summary)["headline_k2_ring_events"] == ("FAILED", "rc 1"), summary
    assert re.search(r"^  K=2 ring events: #wrong 10, busbw", summary, re.M), summary
    assert re.search(r"^  K=2 ring ll: #wrong 0, busbw", summary, re.M), summary
    assert re.search(r"^#wrong: 10 wrong over 3 checked runs", summary, re.M), summary
    target = next(line for line in summary.splitlines() if line.startswith("targets"))
    assert "of the copy ceiling (>= 80%: MISSED (#wrong 10 in its checked run))" in target, target
    assert re.search(r"8B on ll \(auto\) \d+\.\d us \(<= 15 us: (met|MISSED)\)$", target), target  # checked, 0 wrong


def test_a_target_without_its_checked_run_is_unchecked(tmp_path):
    p, out, _ = rehearse(tmp_path, "--only", "copy_bw,perf_k2_ring_events")
    assert p.returncode == 0, p.stderr[-2000:]
    target = next(line for line in (out / "summary.txt").read_text().splitlines() if line.startswith("targets"))
    assert "(>= 80%: unchecked (no checked run at this size))" in target, target


def fake_stage(tmp_path, missing_lib):
    """A stage whose bin/all_reduce_perf needs libcclab_gone.so (built here, then removed) when
    missing_lib, else holds the real build's binaries."""
    stage = tmp_path / "stage"
    (stage / "bin").mkdir(parents=True)
    (stage / "tests").mkdir()
    (stage / "lib").mkdir()
    (stage / "MANIFEST.txt").write_text("# scripts/gpu_stage build -> stage, 2000-01-01T00:00:00Z, commit 0123abc\n")
    for f in ("bin/all_reduce_perf", "bin/copy_bandwidth", "tests/cuda_host_logic_test"):
        shutil.copy2(BUILD / f, stage / f)
    if missing_lib:
        src = tmp_path / "src"
        src.mkdir()
        (src / "gone.c").write_text("int cclab_gone(void) { return 7; }\n")
        (src / "main.c").write_text("int cclab_gone(void);\nint main(void) { return cclab_gone() == 7 ? 0 : 1; }\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(stage / "lib" / "libcclab_gone.so"), str(src / "gone.c")],
                       check=True, timeout=60)
        (stage / "bin" / "all_reduce_perf").unlink()
        subprocess.run(["cc", "-o", str(stage / "bin" / "all_reduce_perf"), str(src / "main.c"), "-L", str(stage / "lib"),
                        "-lcclab_gone"], check=True, timeout=60)
        (stage / "lib" / "libcclab_gone.so").unlink()  # the library that did not travel
    return stage


def preflight(tmp_path, stage, env=None):
    out = tmp_path / "out"
    return subprocess.run([str(SCRIPT), "--rehearse", "--preflight", str(stage)],
                          env=dict(os.environ, OUT=str(out), **(env or {})), capture_output=True, text=True, timeout=120), out


def test_preflight_passes_on_this_build_in_seconds(tmp_path):
    t0 = time.monotonic()
    p, out = preflight(tmp_path, BUILD)
    assert p.returncode == 0, p.stdout + p.stderr
    assert time.monotonic() - t0 < 30
    assert re.search(r"^ok +glibc: +\d+\.\d+", p.stdout, re.M), p.stdout
    assert re.search(r"^ok +libraries: +6 binaries resolve", p.stdout, re.M), p.stdout
    assert p.stdout.rstrip().endswith("preflight: no blocker")
    assert (out / "preflight.txt").read_text() == p.stdout


def test_preflight_names_a_missing_library_in_one_line(tmp_path):
    if subprocess.run(["sh", "-c", "command -v cc"], capture_output=True).returncode != 0:
        pytest.skip("no C compiler here to build the stand-in")
    p, out = preflight(tmp_path, fake_stage(tmp_path, missing_lib=True))
    assert p.returncode == 1, p.stdout
    blockers = [line for line in p.stdout.splitlines() if line.startswith("BLOCKER")]
    assert blockers == ["BLOCKER  libraries:         bin/all_reduce_perf needs libcclab_gone.so: not found on this machine nor "
                        "in lib/"], p.stdout
    assert "preflight: 1 BLOCKER(s)" in p.stdout
    assert (out / "MANIFEST.txt").exists(), "the manifest comes back with the preflight"


def test_preflight_blocks_binaries_newer_than_the_machines_glibc(tmp_path):
    p, _ = preflight(tmp_path, fake_stage(tmp_path, missing_lib=False), env={"GPU_CHECK_MACHINE_GLIBC": "2.17"})
    assert p.returncode == 1, p.stdout
    line = next(l for l in p.stdout.splitlines() if l.startswith("BLOCKER  symbols:"))
    assert "need more than this machine's glibc 2.17" in line and "bin/all_reduce_perf (GLIBC_2." in line, line


def test_follow_up_redoes_what_the_last_run_left_then_the_smaller_k(tmp_path):
    # Last run: ring x graph fails (a wrong answer), ring x ll times out, the budget is not an issue.
    body = '''case "$GPU_CHECK_STEP" in
  check_k2_ring_graph) echo "# Out of bounds values : 3 FAILED"; exit 1 ;;
  check_k2_ring_ll) exec sleep 600 ;;
esac'''
    env = dict(stand_in(tmp_path, body), GPU_CHECK_MAX_STEP_SECONDS=str(STEP_SECONDS))
    p, out, _ = rehearse(tmp_path, "--only", "check_k*_ring_*", env=env)
    assert p.returncode == 1, p.stderr[-2000:]
    # The follow-up with a sound binary: ring x graph again, ring x ll not (it timed out: its ordering
    # stays skipped), then the sweep at K = 3 (the rehearsal's smaller K) for what --only selects.
    p, out, _ = rehearse(tmp_path, "--follow-up", "--only", "check_k*_ring_*")
    assert p.returncode == 1, p.stderr[-2000:]  # the skipped ordering is still a failure to report
    summary = (out / "summary.txt").read_text()
    log = (out / "gpu_check.log").read_text()
    assert "follow-up: from " in log and ": check_k2_ring_graph" in log, log[:3000]
    ran = re.findall(r"^\$ .*all_reduce_perf .*-g (\d) --algo ring.*-J \S+/(check_k\d_ring_\w+)\.json$", log, re.M)
    assert [name for _, name in ran] == ["check_k2_ring_graph", "check_k3_ring_events", "check_k3_ring_graph"], ran
    steps = steps_of(summary)
    assert steps["check_k3_ring_ll"] == ("skipped", "ordering ll timed out in check_k2_ring_ll (last run)"), summary
    assert "check_k2_ring_graph" not in steps, "it passed this time"
    assert steps["check_k2_ring_ll"] == ("FAILED", "timed out last run: not rerun"), summary


def test_a_stage_gets_its_manifest_back_and_its_libraries_only_on_cclabs_commands(tmp_path):
    # A stage (here: the build's bin/ and tests/ linked in, an empty lib/, a manifest) without the
    # execute bit on one binary: restored on arrival; the commit comes from MANIFEST.txt, which comes
    # back in $OUT; lib/ is on the library path of cclab's commands, not of the device step's tools.
    stage = tmp_path / "stage"
    stage.mkdir()
    (stage / "bin").symlink_to(BUILD / "bin")
    (stage / "tests").symlink_to(BUILD / "tests")
    (stage / "lib").mkdir()
    (stage / "MANIFEST.txt").write_text("# scripts/gpu_stage build -> stage, 2000-01-01T00:00:00Z, commit 0123abc-dirty\n")
    body = 'echo "cclab sees LD_LIBRARY_PATH=$LD_LIBRARY_PATH"'
    p, out, _ = rehearse(tmp_path, "--only", "check_k2_ring_events", build=stage,
                         env=dict(stand_in(tmp_path, body), LD_LIBRARY_PATH=""))
    assert p.returncode == 0, p.stderr[-2000:]
    assert sorted(f.name for f in out.iterdir()) == ["MANIFEST.txt", "gpu_check.log", "gpu_check_files.tar.gz", "summary.txt"]
    summary = (out / "summary.txt").read_text()
    assert "#   staged: commit 0123abc-dirty" in summary, summary
    assert "#   LD_LIBRARY_PATH outside cclab's commands: unset" in summary, summary
    log = (out / "gpu_check.log").read_text()
    assert f"cclab sees LD_LIBRARY_PATH={stage / 'lib'}" in log, log[-3000:]


def test_a_stage_without_execute_bits_gets_them_back(tmp_path):
    stage = fake_stage(tmp_path, missing_lib=False)
    (stage / "bin" / "copy_bandwidth").chmod(0o644)
    p, _ = preflight(tmp_path, stage)
    assert os.access(stage / "bin" / "copy_bandwidth", os.X_OK), p.stdout
