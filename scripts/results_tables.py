"""The results tables of README.md and docs/results.md, generated from benchmarks/results/*.json (never typed).

    python scripts/results_tables.py --write   # rewrite every generated block
    python scripts/results_tables.py --check   # exit 1 if a block is not what the results files say (CI runs it)

A generated block sits between `<!-- results:NAME -->` and `<!-- /results:NAME -->`; everything else in a page is
left alone. docs/results.md holds every block; the README holds the headline (`accuracy`). Every row names the
CPU (model and flags) and the model file (sha256) it was measured with, from
the results file's `provenance` record (`facerec.provenance`). The tables are made in `scripts/result_blocks/`, one
module per kind of result: each function there named `NAME_block` makes the block NAME.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tables that facerec itself prints (open set) are made by its own code

from result_blocks import accuracy, cameras, feedback, gallery, house, library, open_set, packs, scale, testing, training, video  # noqa: E402

PAGES = {ROOT / "README.md": ("growth", "accuracy", "packs_headline", "speed_line"),
         ROOT / "docs" / "results.md": ("probe_quality", "peer_open_set", "cpus", "accuracy", "peer", "speed", "sightings", "quality_agreement", "enrollment_quality",
                                        "rest", "scale", "faiss_million", "yardstick", "flood", "identify_profile", "reindex_online",
                                        "replay_learning", "suggestions", "strangers_memory", "library_grouping", "library_missed_groups", "scores", "rerank",
                                        "score_cost", "video_hamilton", "video_open_set", "video_request", "video_page", "video_bombs", "hardening_round5", "public_domain", "packs", "claims", "claim_rates"),
         ROOT / "docs" / "deployment.md": ("replicas", "engines", "pgvector_million", "pgvector_choices"),
         ROOT / "docs" / "model.md": ("gpu_stage", "gpu_stage_v10", "calibration", "cohort_sweep", "recipe_diagnostic", "asymmetric_flip", "data_slope", "utkface",
                                      "train_speed",
                                      "augmentation_ablation", "standard_stem", "enrollment_views"),
         ROOT / "docs" / "threshold-policy.md": ("threshold_example",),
         ROOT / "docs" / "cameras.md": ("cameras",),
         ROOT / "docs" / "testing.md": ("test_suite",),
         ROOT / "docs" / "architecture.md": ("house",),
         ROOT / "docs" / "how-the-threshold-works.md": ("calibration", "open_set", "open_set_photos", "lookalike")}
BLOCKS: dict[str, Callable[[], str]] = {name.removesuffix("_block"): function
                                        for module in (accuracy, cameras, feedback, open_set, gallery, house, library, packs, scale, testing, training, video)
                                        for name, function in vars(module).items() if name.endswith("_block")}


def generated(text: str, names: tuple[str, ...], page: str) -> str:
    for name in names:
        pattern = re.compile(rf"(<!-- results:{name} -->\n).*?(\n<!-- /results:{name} -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"{page} has no generated block '{name}'")
        block = BLOCKS[name]()
        text = pattern.sub(lambda match, block=block: match.group(1) + block + match.group(2), text)
    return text


def main() -> int:
    stale = []
    for page, names in PAGES.items():
        current = page.read_text()
        wanted = generated(current, names, page.name)
        if "--write" in sys.argv[1:]:
            page.write_text(wanted)
        elif wanted != current:
            stale.append(str(page.relative_to(ROOT)))
    if stale:
        print(f"{', '.join(stale)}: the results tables differ from benchmarks/results: run python "
              "scripts/results_tables.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
