"""Figures that say where they come from: every results file names its model file, commit, CPU and threads; the
model card refuses a results file of another model; the README's results tables are what the files say."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from facerec.provenance import file_sha256, write_result
from facerec.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def script(name: str):
    """A module of scripts/ imported by path (they are run as scripts, not installed)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_write_result_records_model_commit_cpu_threads_and_date(tmp_path: Path) -> None:
    model = Settings().model_path
    written = write_result(tmp_path / "out.json", {"rank1": 0.5}, model, threads=1)
    saved = json.loads((tmp_path / "out.json").read_text())
    assert saved == written and saved["rank1"] == 0.5
    record = saved["provenance"]
    assert record["model_sha256"] == file_sha256(model) and record["threads"] == 1
    assert len(record["commit"].split("+")[0]) == 40
    assert record["cpu"]["model"] and "avx2" in record["cpu"]["flags"] and record["cpu"]["int8_dot_product"]
    assert record["date"].endswith("Z")


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_every_results_file_names_its_model_commit_cpu_and_threads(path: Path) -> None:
    record = json.loads(path.read_text()).get("provenance")
    assert record, f"{path.name} has no provenance record"
    for key in ("model_sha256", "commit", "cpu", "threads", "date"):
        assert key in record, f"{path.name}: provenance lacks {key}"
    assert record["cpu"]["model"], path.name
    # Files measured before results recorded their CPU carry what git and the closing notes say, marked as such.
    assert record["cpu"]["flags"] or "recorded_afterwards" in record, f"{path.name}: no CPU flags"


def test_the_card_refuses_a_results_file_of_another_model(tmp_path: Path) -> None:
    card = script("make_model_card")
    result = tmp_path / "eval.json"
    write_result(result, {"rank1": 0.9}, Settings().model_path, threads=0)
    shipped = file_sha256(Settings().model_path)
    assert card.load_measured(result, shipped)["rank1"] == 0.9
    card.ROOT = tmp_path  # its message names the file relative to the repository
    with pytest.raises(SystemExit, match="not the shipped"):
        card.load_measured(result, "0" * 64)
    unrecorded = tmp_path / "old.json"
    unrecorded.write_text(json.dumps({"rank1": 0.978}))  # v1's pairs figure lived on in the card like this
    with pytest.raises(SystemExit, match="measured model None"):
        card.load_measured(unrecorded, shipped)


def test_the_shipped_card_was_made_from_results_of_the_shipped_model() -> None:
    card = json.loads(Settings().model_card_path.read_text())
    shipped = file_sha256(Settings().model_path)
    assert card["sha256"] == shipped and card["self_check"]["model_sha256"] == shipped
    for name in ("eval_lfw2", "eval_lfw2_distractors", "eval_pairs", "peer", "peer_pairs", "speed_1thread",
                 "enrollment_quality", "embedding_options"):
        assert json.loads((RESULTS / f"{name}.json").read_text())["provenance"]["model_sha256"] == shipped, name


def test_the_results_tables_are_generated_from_the_results_files() -> None:
    checked = subprocess.run([sys.executable, str(ROOT / "scripts" / "results_tables.py"), "--check"],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    results = (ROOT / "docs" / "results.md").read_text()
    for block in ("cpus", "accuracy", "peer", "speed", "sightings"):
        assert f"<!-- results:{block} -->" in results
    assert "Haswell" in results and "AVX2" in results  # the every-CPU table names its CPUs
    assert "<!-- results:accuracy -->" in (ROOT / "README.md").read_text()  # the front door's headline table


def test_the_results_page_types_no_figure_of_its_own() -> None:
    """#30: the page's figures come from benchmarks/results through its generated blocks; outside them only the
    historical figures named here may appear (the every-CPU issue's report of the old 8-bit file)."""
    import re

    page = (ROOT / "docs" / "results.md").read_text()
    prose = re.sub(r"<!-- results:(\w+) -->.*?<!-- /results:\1 -->", "", page, flags=re.S)
    assert set(re.findall(r"\b\d\.\d{3}\b", prose)) <= {"0.859", "0.810"}


# Numbers with a unit that the pages may state outside generated blocks: limits and settings the code enforces,
# rates a user chooses, interval levels, sizes in examples and test set-ups. Anything measured comes from
# benchmarks/results through a generated block (scripts/results_tables.py), never typed.
STATED = {
    "README.md": {"1%"},
    "SECURITY.md": {"1 MiB", "1.5 GB", "10 minutes", "15 MB", "16 MP", "16 MiB", "2 GiB", "2 minutes", "2,048 px",
                    "20 s", "20x", "256 MiB", "257 MiB", "30 days", "31 MiB", "4 MP", "40 megapixels", "40 px",
                    "512 MiB", "64 MiB", "41 MB", "21 MB", "60 s", "300 s", "1,280 px", "257 MiB",
                    "8 MB", "3840x",  # a live camera frame's limits (facerec.ui.camera_input)
                    # a video's frame (facerec.video.decode.MAX_FRAME_PIXELS), an anonymous video's decoding
                    # (facerec.gallery.video.ANONYMOUS_LIMITS), the memory bound the flood is held to
                    "4096x", "9.4 megapixels", "3,732 megapixels", "2 GB",
                    "1.5 GiB",  # three REST videos' disk at the moment each is copied out of its spool
                    "5 s"},  # a webhook try (facerec.cameras.sinks)
    "docs/api.md": {"1 MB", "15 MB", "16 MP", "256 MB", "30 s", "31 MB", "40 megapixels"},
    "docs/app.md": {"0.1%", "1%", "112 px", "15 MB", "16 MP", "2 minutes", "30 days", "34 px", "40 megapixels"},
    "docs/cli.md": {"0.1%", "1%", "30 days"},  # how long a grouped library run keeps strangers' embeddings
    "docs/deployment.md": {"60 s", "4 GB"},
    "docs/health.md": {"15 px", "3 px", "34 px", "35 px", "4 px", "5%"},  # + the calibration's blur and low share
    "docs/how-the-threshold-works.md": {"0.1%", "1%", "10%", "12 px", "90%", "95%"},
    "docs/results.md": {"1%", "10%", "20 ms", "30 MB", "40 megapixels", "5 ms", "5%", "87 kB", "99.9%",
                        "13,300x", "16,000x"},  # the sizes of the hostile inputs the flood sends
    "docs/threshold-policy.md": {"1%", "5%"},
    "docs/cameras.md": {"1 s", "10 s", "15 s", "2 s", "3,600 s", "30 s", "5 s"},  # back-off, bounds (stated)
}
WITH_UNIT = (r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?(ms|s|seconds|minutes|min|h|hours|days|MB|GB|KB|kB|MiB|GiB|B|%|x|px|"
             r"MP|megapixels|faces/s|img/s|requests/s)(?![\w/])")


def typed_figures(page: Path) -> set[str]:
    """Every number with a unit on `page` outside its generated blocks, as "15 MB", "1%", "20x"."""
    import re

    prose = re.sub(r"<!-- results:(\w+) -->.*?<!-- /results:\1 -->", "", page.read_text(), flags=re.S)
    return {f"{number}{unit}" if unit in ("%", "x") else f"{number} {unit}"
            for number, unit in re.findall(WITH_UNIT, prose)}


def test_no_page_types_a_measured_figure() -> None:
    """#40 item 5: today's guard (results.md's three-decimal figures) extended to every number with a unit on the
    README, SECURITY.md and every docs page but the model's history (docs/model.md) and docs/architecture.md:
    outside generated blocks, only the stated limits and settings above."""
    pages = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]
    typed = {str(page.relative_to(ROOT)): sorted(typed_figures(page) - STATED.get(str(page.relative_to(ROOT)), set()))
             for page in pages if page.name not in ("model.md", "architecture.md")}
    assert {page: figures for page, figures in typed.items() if figures} == {}


def test_the_typed_figure_guard_finds_a_typed_figure(tmp_path) -> None:
    page = tmp_path / "page.md"
    page.write_text("Identify takes 36 ms.\n<!-- results:x -->\n| 12 ms |\n<!-- /results:x -->\nAt most 15 MB.\n")
    assert typed_figures(page) == {"36 ms", "15 MB"}
