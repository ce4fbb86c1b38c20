"""The training set that travels to a borrowed GPU machine (scripts/device_training.py) is the one training reads
here: the same rows, identities, splits and teacher targets, and crops that differ only by the WebP re-encoding;
and an arm's weights, split in two files to come back, join into the embedder they were."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import torch

from facerec.train.backbone import FaceEmbedder
from facerec.train.data import load_sources

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("device_training", ROOT / "scripts" / "device_training.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["device_training"] = module  # its worker pool pickles functions by module name
    spec.loader.exec_module(module)
    return module


def _small_celeba(celeba112: Path, folder: Path, identities: int = 12) -> Path:
    folder.mkdir()
    for source in sorted(p for p in celeba112.iterdir() if p.is_dir())[:identities]:
        (folder / source.name).symlink_to(source)
    return folder


def test_the_packed_training_set_is_the_one_training_reads(celeba112: Path, data_dir: Path, tmp_path: Path) -> None:
    script = _script()
    celeba = _small_celeba(celeba112, tmp_path / "celeba")
    teacher = data_dir / "teacher" / "celeba112_dlib.npz"
    script.pack(tmp_path / "pack", str(celeba), None, [str(teacher)])
    script.STAGED = tmp_path / "pack"
    travelled = script.unpack()
    here = load_sources(celeba, None, [teacher], workers=1)
    assert travelled.identities == here.identities and travelled.splits == here.splits
    assert travelled.paths == here.paths and len(travelled.rows("val")) and len(travelled.rows("train"))
    np.testing.assert_allclose(travelled.teacher, here.teacher, atol=2e-3)  # float16 on the way
    difference = np.abs(travelled.images.astype(np.int16) - here.images.astype(np.int16))
    assert difference.mean() < 4 and travelled.images.shape == here.images.shape  # WebP, not another photo


def test_an_arms_two_halves_join_into_its_weights(tmp_path: Path) -> None:
    script = _script()
    model = FaceEmbedder("high_res").eval()
    state = {k: (v.half() if v.is_floating_point() and v.dim() > 1 else v) for k, v in model.state_dict().items()}
    keys = list(state)
    config = {"stem": "high_res"}
    torch.save({"model": {k: state[k] for k in keys[:30]}, "config": config, "history": []}, tmp_path / "a.pt")
    torch.save({"model": {k: state[k] for k in keys[30:]}, "config": config, "history": []}, tmp_path / "b.pt")
    script.join(tmp_path / "a.pt", tmp_path / "b.pt", tmp_path / "joined.pt")
    joined = torch.load(tmp_path / "joined.pt", weights_only=False)["model"]
    assert set(joined) == set(model.state_dict())
    for name, value in model.state_dict().items():
        if value.is_floating_point():
            torch.testing.assert_close(joined[name], value, atol=1e-3, rtol=1e-3)


def test_the_fused_scores_arm_takes_dlibs_weight_from_the_shipped_join() -> None:
    """#61 item 5: the arm's share is the one the fused pack was built with (benchmarks/fused_embedding.py chose
    it), read from the join's file, and with BASE it is a configuration the loop accepts."""
    import json

    from facerec.train.loop import TrainConfig

    script = _script()
    settings = script.arm_settings("fused_scores")
    chosen = json.loads((ROOT / "benchmarks/results/fused_embedding.json").read_text())["chosen"]
    assert abs(settings["fused_share"] - chosen["dlib_weight"]) < 1e-4, (settings, chosen)
    config = TrainConfig(**{**script.BASE, **settings})
    assert config.structure_weight > 0 and config.reference_model and 0 < config.fused_share < 1
    assert script.DEFAULT_ARMS == ("control", "fused_scores") and script.ARMS["control"] == {}
