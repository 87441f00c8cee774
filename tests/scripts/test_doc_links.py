"""Every document the README and docs/ point to exists: paths spelled docs/....md (from the repository
root), markdown links and images (relative to the page), and data/... paths of the results pages."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "results").glob("*.md"))]

DOC_PATH = re.compile(r"(?<![\w/.-])(docs/[\w./-]+\.(?:md|png))")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
DATA_PATH = re.compile(r"`(data/[\w./-]+)`")
# Pages the docs name as the place for results not measured yet (docs/cuda.md: the first GPU run's).
NOT_YET_WRITTEN = {"docs/results/gpu-h200.md"}


def missing_targets(page):
    text = page.read_text(encoding="utf-8")
    missing = []
    for target in DOC_PATH.findall(text):
        if not (ROOT / target).exists() and target not in NOT_YET_WRITTEN:
            missing.append(target)
    for target in LINK.findall(text):
        if "://" in target:
            continue
        if not (page.parent / target).exists():
            missing.append(target)
    if page.parent.name == "results":
        for target in DATA_PATH.findall(text):
            if not (page.parent / target).exists():
                missing.append(target)
    return missing


def test_pages_exist():
    assert (ROOT / "docs" / "design.md") in PAGES


def test_every_referenced_document_exists():
    broken = {str(p.relative_to(ROOT)): m for p in PAGES if (m := missing_targets(p))}
    assert not broken, broken


def test_the_check_finds_a_missing_page(tmp_path):
    page = tmp_path / "x.md"
    page.write_text("see `docs/no-such-page.md` and [that](nowhere.md)\n")
    assert missing_targets(page) == ["docs/no-such-page.md", "nowhere.md"]
