"""The model card's shipped run and its lineage come from the same training logs: `scripts/retrain.sh` keeps each
stage's logs under models/training/lineage/<stage>/ and the last stage's as models/training/train_*.  When a
retrain refreshed the lineage but not the shipped run's copies (a bug of the three-stage retrain.sh, mended), the
card described one run's config beside another's history."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ROOT / "models" / "training"


def _stages_in_retrain_order() -> list[str]:
    """The stages `scripts/retrain.sh` trains, in the order it trains them (its `stage NAME ...` lines)."""
    return re.findall(r"^stage (\S+) ", (ROOT / "scripts" / "retrain.sh").read_text(), flags=re.MULTILINE)


def test_the_shipped_run_is_the_last_stage_retrain_trains() -> None:
    stages = _stages_in_retrain_order()
    assert stages, "retrain.sh trains no stage"
    last = TRAINING / "lineage" / stages[-1]
    assert (TRAINING / "train_log.jsonl").read_text() == (last / "train_log.jsonl").read_text()
    assert json.loads((TRAINING / "train_config.json").read_text()) == json.loads(
        (last / "train_config.json").read_text())


def test_every_stage_retrain_trains_has_its_logs_in_the_lineage() -> None:
    for stage in _stages_in_retrain_order():
        history = [json.loads(line) for line in (TRAINING / "lineage" / stage / "train_log.jsonl").read_text()
                   .splitlines()]
        config = json.loads((TRAINING / "lineage" / stage / "train_config.json").read_text())["config"]
        assert [h["epoch"] for h in history] == list(range(1, config["epochs"] + 1)), stage
