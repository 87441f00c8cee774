"""The test algorithms of tests/plan/algorithms are what their generators write: rerunning
make_msccl_examples.py and make_mscclpp_examples.py into a temporary folder reproduces every committed
file byte for byte, and every file names the public example it reproduces."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALGORITHMS = ROOT / "tests" / "plan" / "algorithms"


def test_generators_reproduce_the_committed_files(tmp_path):
    for script in ("make_msccl_examples.py", "make_mscclpp_examples.py"):
        subprocess.run([sys.executable, str(ALGORITHMS / script), str(tmp_path)], check=True)
    written = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in ALGORITHMS.iterdir() if p.suffix in (".xml", ".json"))
    assert written == committed
    for name in written:
        assert (tmp_path / name).read_bytes() == (ALGORITHMS / name).read_bytes(), name


def test_every_file_names_the_public_example_it_reproduces():
    for path in ALGORITHMS.iterdir():
        if path.suffix in (".xml", ".json"):
            text = path.read_text(encoding="utf-8")
            assert "examples/mscclang/" in text or "microsoft/mscclpp" in text, path.name
