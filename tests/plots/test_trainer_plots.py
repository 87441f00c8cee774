"""plots/trainer_*.py: synthetic cclab-train -J reports in, PNG out; bad input gives one clear line."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLOTS = Path(__file__).resolve().parents[2] / "plots"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
sys.path.insert(0, str(PLOTS))

import trainer_common  # noqa: E402
import trainer_gradients  # noqa: E402
import trainer_scaling  # noqa: E402
import trainer_straggler  # noqa: E402


def report(mode="sync", workers=4, samples_per_s=1000.0, straggler=None, dc_lambda=0.0, ssp=-1, epochs=3, **config):
    return {
        "schema": "cclab-train/1",
        "machine": {"host": "h", "cores": 2, "date": "2026-01-01T00:00:00Z", "communicator": "host"},
        "command": "cclab-train",
        "config": {"mode": mode, "workers": workers, "dc_lambda": dc_lambda, "ssp": ssp,
                   "straggler": None if straggler is None else {"rank": 1, "factor": straggler}, **config},
        "summary": {"samples_per_s": samples_per_s, "compute_us": 1000.0, "exposed_comm_us": 300.0, "wait_us": 200.0,
                    "comm_fraction": 0.2, "overlap_ratio": 0.4},
        "epochs": [{"epoch": e, "train_loss": 1.0 / (e + 1), "test_loss": 1.0, "test_accuracy": 0.8 + 0.01 * e,
                    "time_s": 1.5 * (e + 1), "samples_per_s": samples_per_s} for e in range(epochs)],
    }


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def run(script, *args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(PLOTS / script), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)


def assert_png(path):
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_curves_plot_several_runs(tmp_path):
    files = [write(tmp_path, "s.json", report()), write(tmp_path, "a.json", report("async", dc_lambda=0.04))]
    out = tmp_path / "curves.png"
    r = run("trainer_curves.py", *files, "-o", out)
    assert r.returncode == 0, r.stderr
    assert_png(out)


def test_comm_bars(tmp_path):
    files = [write(tmp_path, "s.json", report()), write(tmp_path, "a.json", report("async"))]
    out = tmp_path / "comm.png"
    r = run("trainer_comm.py", *files, "-o", out, "--label", "sync", "--label", "async")
    assert r.returncode == 0, r.stderr
    assert_png(out)


def test_straggler_plot_and_slowdown_values(tmp_path):
    runs = [report(samples_per_s=1000.0), report(samples_per_s=800.0, straggler=1.4),
            report(samples_per_s=500.0, straggler=2.0), report("async", samples_per_s=900.0),
            report("async", samples_per_s=850.0, straggler=2.0)]
    data = trainer_straggler.slowdowns(runs)
    assert data["sync 4w"] == [(1.0, 1.0), (1.4, 1.25), (2.0, 2.0)]
    assert data["async 4w"][1] == (2.0, pytest.approx(900.0 / 850.0))
    files = [write(tmp_path, f"r{i}.json", r) for i, r in enumerate(runs)]
    out = tmp_path / "straggler.png"
    r = run("trainer_straggler.py", *files, "-o", out)
    assert r.returncode == 0, r.stderr
    assert_png(out)


def test_scaling_efficiency_values_and_plot(tmp_path):
    runs = [report(workers=1, samples_per_s=100.0), report(workers=2, samples_per_s=150.0),
            report(workers=4, samples_per_s=200.0), report(workers=4, samples_per_s=10.0, straggler=2.0)]
    data = trainer_scaling.efficiencies(runs)
    assert data["sync"] == [(1, 100.0, 1.0), (2, 150.0, 0.75), (4, 200.0, 0.5)]
    files = [write(tmp_path, f"r{i}.json", r) for i, r in enumerate(runs)]
    out = tmp_path / "scaling.png"
    r = run("trainer_scaling.py", *files, "-o", out)
    assert r.returncode == 0, r.stderr
    assert_png(out)


def test_repeated_runs_combine_by_median():
    runs = [report(workers=1, samples_per_s=v) for v in (90.0, 100.0, 400.0)] + [
        report(workers=2, samples_per_s=v) for v in (150.0, 160.0)]
    data = trainer_scaling.efficiencies(runs)
    assert data["sync"][0] == (1, 100.0, 1.0)
    assert data["sync"][1] == (2, 155.0, pytest.approx(0.775))
    runs = [report(samples_per_s=v) for v in (100.0, 300.0, 200.0)] + [report(samples_per_s=100.0, straggler=2.0)]
    assert trainer_straggler.slowdowns(runs)["sync 4w"][1] == (2.0, 2.0)


def test_runs_of_different_configurations_are_separate_lines_not_repeats():
    # Two models: their runs were merged as repeats of "sync 4w" (a 9x slowdown from a mismatch).
    small = dict(widths=[784, 32, 10], batch=64)
    big = dict(widths=[784, 4096, 10], batch=64)
    runs = [report(samples_per_s=1000.0, **small), report(samples_per_s=800.0, straggler=2.0, **small),
            report(samples_per_s=100.0, **big), report(samples_per_s=50.0, straggler=2.0, **big),
            report(samples_per_s=1000.0, seed=5, lr=0.2, **small)]  # a repeat: seed and lr do not change throughput
    data = trainer_straggler.slowdowns(runs)
    assert data == {"sync 4w (widths 784-32-10)": [(1.0, 1.0), (2.0, 1.25)],
                    "sync 4w (widths 784-4096-10)": [(1.0, 1.0), (2.0, 2.0)]}
    scaling = [report(workers=1, samples_per_s=100.0, **small), report(workers=2, samples_per_s=180.0, **small),
               report(workers=1, samples_per_s=10.0, batch=128), report(workers=2, samples_per_s=10.0, batch=128)]
    eff = trainer_scaling.efficiencies(scaling)
    assert eff == {"sync (batch 64, widths 784-32-10)": [(1, 100.0, 1.0), (2, 180.0, 0.9)],
                   "sync (batch 128)": [(1, 10.0, 1.0), (2, 10.0, 0.5)]}
    with pytest.raises(trainer_common.InputError):  # a 2-worker big run has no 1-worker run of its own
        trainer_scaling.efficiencies(scaling + [report(workers=2, samples_per_s=5.0, **big)])


def test_labels_name_the_configuration():
    assert trainer_common.run_label(report("async", dc_lambda=0.04, ssp=4)) == "async 4w DC 0.04 SSP 4"
    assert trainer_common.run_label(report(straggler=1.4)) == "sync 4w straggler 1:1.4"
    assert trainer_common.run_label(report(shard="hard-to:1")) == "sync 4w hard-to:1"
    assert trainer_common.run_label(report(shard="shuffle-each-epoch")) == "sync 4w"


def with_gradients(run, variance, norms):
    """Step records with gradient statistics: one step per variance, rank r's |g_r| = norms[r]."""
    run["steps"] = [{"epoch": 0, "step": k, "rank": r, "grad_norm": norms[r], "mean_grad_norm": 1.0, "grad_variance": v}
                    for k, v in enumerate(variance) for r in range(len(norms))]
    return run


def test_gradients_plot_and_series(tmp_path):
    iid = with_gradients(report(shard="shuffle-each-epoch"), [4.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0])
    hard = with_gradients(report(shard="hard-to:2"), [9.0, 5.0, 3.0], [1.0, 1.0, 3.0, 1.0])
    variance, norms = trainer_gradients.gradient_series(hard)
    assert variance == [9.0, 5.0, 3.0]
    assert norms == {0: 1.0, 1: 1.0, 2: 3.0, 3: 1.0}
    files = [write(tmp_path, "iid.json", iid), write(tmp_path, "hard.json", hard)]
    out = tmp_path / "gradients.png"
    r = run("trainer_gradients.py", *files, "-o", out)
    assert r.returncode == 0, r.stderr
    assert_png(out)
    r = run("trainer_gradients.py", write(tmp_path, "async.json", report("async")), "-o", tmp_path / "y.png")
    assert r.returncode == 2 and "no gradient statistics" in r.stderr
    assert not (tmp_path / "y.png").exists()


@pytest.mark.parametrize("script", ["trainer_curves.py", "trainer_comm.py", "trainer_straggler.py", "trainer_scaling.py",
                                    "trainer_gradients.py"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, script):
    cases = [tmp_path / "missing.json", write(tmp_path, "bad.json", "{not json"),
             write(tmp_path, "other.json", {"schema": "something-else"})]
    for path in cases:
        r = run(script, path, "-o", tmp_path / "x.png")
        assert r.returncode == 2, (path, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stderr.startswith(script), r.stderr
        assert not (tmp_path / "x.png").exists()


def test_missing_baselines_are_reported(tmp_path):
    only_straggled = write(tmp_path, "s.json", report(straggler=1.4))
    r = run("trainer_straggler.py", only_straggled, "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "baseline" in r.stderr
    no_single = write(tmp_path, "four.json", report(workers=4))
    r = run("trainer_scaling.py", no_single, "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "1-worker" in r.stderr
