"""Write each pack's measured figures into its card (`models/<pack>.json`), from benchmarks/results, so that
`facerec models` can show them without the benchmarks installed.

    python scripts/pack_cards.py            # after benchmarks/pack_speed.py, pack_accuracy.py and the LFW evals

Nothing numeric is typed here: `pack_speed` (one thread, detection a photo and alignment + network a face, the CPU)
from benchmarks/results/pack_speed.json, `pack_figures` (held-out TAR, LFW one-shot, FPIR / DIR at 4,848 people)
from pack_accuracy.json and the pack's `facerec eval` files. A figure measured on another file of the pack than
the one in models/ is refused (its model id or sha256 must be the pack's own).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from facerec.faces.pack_parts import embedder_for  # noqa: E402
from facerec.packs.catalog import DEFAULT_PACK, PACKS  # noqa: E402
from facerec.settings import pack_file  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def load(name: str) -> dict:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def evaluation(name: str, distractors: bool) -> dict:
    stem = "eval_lfw2_distractors" if distractors else "eval_lfw2"
    return load(stem if name == DEFAULT_PACK else f"{stem}_{name}")


def main() -> int:
    speed, accuracy = load("pack_speed"), load("pack_accuracy")
    for name in PACKS:
        embedder = embedder_for(pack_file(name))
        card_path = pack_file(name).with_suffix(".json")
        card = json.loads(card_path.read_text())
        timing = speed.get("rows", {}).get(name)
        if timing:
            if timing["model_id"] != embedder.model_id:
                raise SystemExit(f"pack_speed.json measured {timing['model_id']}, not {embedder.model_id}")
            card["pack_speed"] = {"ms_per_face": timing["embed_ms_per_face"],
                                  "detect_ms_per_photo": timing["detect_ms_per_photo"], "threads": 1,
                                  "cpu": speed["provenance"]["cpu"]["model"], "from": "benchmarks/results/pack_speed.json"}
        figures = {}
        if accuracy.get("pack_sha256", {}).get(name) == embedder.sha256:
            row = next(r for r in accuracy["rows"] if r["pack"] == name and r["scores"] == "as-norm")
            figures["held_out_tar_at_far"] = {k.split("_")[-1]: v for k, v in row.items() if k.startswith("tar")}
        plain, crowded = evaluation(name, False), evaluation(name, True)
        if plain:
            figures["lfw_one_shot_rank1"] = round(plain["rank1"], 4)
        if crowded:
            largest = max(crowded["open_set"]["sizes"], key=lambda size: size["gallery_people"])
            figures["lfw_one_shot_rank1_with_distractors"] = round(crowded["rank1"], 4)
            figures["lfw_open_set_at_default"] = {"gallery_people": largest["gallery_people"],
                                                  "fpir": round(largest["fpir"], 4), "dir": round(largest["dir"], 4)}
        if figures:
            card["pack_figures"] = figures
        card_path.write_text(json.dumps(card, indent=1) + "\n")
        print(name, card.get("pack_speed"), figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
