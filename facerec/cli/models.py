"""`facerec models`: the model packs, what each is made of, whether a company may use it, and what it costs.

Figures come from each pack's card (`models/<pack>.json`: its calibration on held-out identities and its measured
speed, with the CPU they were measured on); nothing is measured when listing. `--pack NAME` (or FACEREC_PACK)
chooses the pack every other command uses; a gallery embedded by another pack is re-embedded with `facerec
reindex`, which says first what that will cost.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from facerec.cli.output import emit, settings_from
from facerec.cli.registry import CommandAdder
from facerec.packs.catalog import PACKS, Pack

FARS = (1e-3, 1e-4, 1e-5)


def register(command: CommandAdder, sub, common: argparse.ArgumentParser) -> None:
    """Add `facerec models` to the parser."""
    command("models", cmd_models, "list the model packs: parts, licence, held-out accuracy and speed")


def pack_summary(pack: Pack, models: Path, in_use: Path) -> dict:
    """What `facerec models` says about one pack (from its files and card; {} figures where it has none)."""
    card_path = pack.file(models, ".json")
    card = json.loads(card_path.read_text()) if card_path.is_file() else {}
    files = [models / part.file for part in pack.parts if not part.file.endswith("(pip dependency)")]
    calibration = card.get("calibration", {})
    measured = card.get("pack_figures", {})
    tar = measured.get("held_out_tar_at_far") or {  # else the calibration's, at its fitted tail's thresholds
        f"{row['far']:.0e}": row.get("tar") for row in calibration.get("curve", []) if row["far"] in FARS}
    speed = card.get("pack_speed", {})
    return {
        "name": pack.name, "title": pack.title, "in_use": pack.file(models) == in_use,
        "installed": all(path.is_file() for path in files),
        "commercial_use": pack.commercial_use, "extra": pack.extra,
        "size_mb": round(sum(path.stat().st_size for path in files if path.is_file()) / 1e6, 1),
        "held_out_tar_at_far": tar, "held_out_identities": calibration.get("identities"),
        "lfw_one_shot_rank1": measured.get("lfw_one_shot_rank1"),
        "lfw_open_set_at_default": measured.get("lfw_open_set_at_default"),
        "ms_per_face_one_thread": speed.get("ms_per_face"), "speed_cpu": speed.get("cpu"),
        "parts": [{"role": p.role, "file": p.file, "source": p.source, "licence": p.licence} for p in pack.parts],
    }


def cmd_models(args) -> int:
    settings = settings_from(args)
    models = Path(settings.model_path).parent
    rows = [pack_summary(pack, models, Path(settings.model_path)) for pack in PACKS.values()]

    def cell(value, form: str) -> str:
        return "-" if value is None else format(value, form)

    table = [[("* " if row["in_use"] else "  ") + row["name"], row["commercial_use"].split(":")[0],
              " / ".join(cell(row["held_out_tar_at_far"].get(f"{far:.0e}"), ".3f") for far in FARS),
              cell(row["ms_per_face_one_thread"], ".1f"), f"{row['size_mb']:.0f} MB",
              "yes" if row["installed"] else "no"] for row in rows]
    emit(args, {"packs": rows}, table,
         ["pack", "commercial use", "TAR at FAR 1e-3 / 1e-4 / 1e-5", "ms a face", "files", "installed"],
         text="* in use. TAR: genuine pairs accepted at each false-accept rate on the card's held-out identities; "
              "ms a face: detection excluded, one thread (CPU in `--json`). Choose one with --pack NAME or "
              "FACEREC_PACK=NAME, then `facerec reindex` re-embeds the gallery. Parts and licences: docs/packs.md.")
    return 0
