"""Training code on real aligned faces, kept tiny so it runs on the CPU: heads, augmentation, one epoch with
checkpoint and resume, and the ONNX export checked against torch (< 1e-3)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training tests need the 'train' extra")

from facerec.errors import InvalidArgument
from facerec.train.augment import FaceAugmentation  # noqa: E402
from facerec.train.backbone import FaceEmbedder  # noqa: E402
from facerec.train.data import FaceSet, attach_teacher  # noqa: E402
from facerec.train.export import export_onnx, load_embedder, max_difference  # noqa: E402
from facerec.train.heads import ArcFaceHead, build_head  # noqa: E402
from facerec.train.loop import CHECKPOINT_FILE, LOG_FILE, WEIGHTS_FILE, TrainConfig, train  # noqa: E402


@pytest.fixture(scope="module")
def tiny_faces(celeba112: Path, data_dir: Path) -> FaceSet:
    """Real crops: 6 celeba identities x 4 photos for training, 2 held out, with the shipped teacher targets."""
    from PIL import Image

    folders = [f for f in sorted(celeba112.iterdir()) if len(list(f.iterdir())) >= 4][:8]
    images, identities, splits, paths = [], [], [], []
    for number, folder in enumerate(folders):
        for photo in sorted(folder.iterdir())[:4]:
            images.append(np.asarray(Image.open(photo).convert("RGB")))
            identities.append(f"celeba/{folder.name}")
            splits.append("val" if number >= 6 else "train")
            paths.append(f"celeba/{folder.name}/{photo.name}")
    faces = FaceSet(np.stack(images), identities, splits, paths)
    attach_teacher(faces, [data_dir / "teacher" / "celeba112_dlib.npz"])
    return faces


@pytest.mark.parametrize("stem,side", [("standard", 4), ("high_res", 7)])
def test_backbone_stems_give_512_d_embeddings(stem: str, side: int) -> None:
    model = FaceEmbedder(stem).eval()
    features = model.features(torch.zeros(2, 3, 112, 112))
    assert features.shape == (2, 512, side, side)
    assert model(torch.rand(2, 3, 112, 112) * 255).shape == (2, 512)


@pytest.mark.parametrize("name", ["softmax", "contrastive", "triplet", "arcface"])
def test_every_head_gives_a_finite_loss_and_gradients(name: str) -> None:
    torch.manual_seed(0)
    embeddings = torch.randn(16, 512, requires_grad=True)
    labels = torch.arange(4).repeat_interleave(4)
    head = build_head(name, 512, 4, scale=30.0, margin=0.4 if name == "arcface" else 2.0)
    loss = head(embeddings, labels)
    loss.backward()
    assert math.isfinite(float(loss)) and float(loss) > 0
    assert embeddings.grad is not None and torch.isfinite(embeddings.grad).all() and embeddings.grad.abs().sum() > 0


def test_arcface_margin_lowers_the_target_logit() -> None:
    head = ArcFaceHead(8, 3, scale=30.0, margin=0.4)
    cosine = torch.tensor([[0.9], [0.2], [-0.5], [-0.99]])
    penalised = head.target_logit(cosine)
    assert torch.all(penalised < cosine)
    assert torch.allclose(penalised[0], torch.cos(torch.acos(torch.tensor(0.9)) + 0.4))


def test_augmentation_keeps_shape_and_range(tiny_faces: FaceSet) -> None:
    batch = torch.from_numpy(tiny_faces.images[:8])
    out = FaceAugmentation(blur=1.0, downscale=1.0, grayscale=0.5)(batch)
    assert out.shape == (8, 3, 112, 112) and out.dtype == torch.float32
    assert float(out.min()) >= 0 and float(out.max()) <= 255
    plain = FaceAugmentation(enabled=False)(batch)
    assert torch.equal(plain, batch.permute(0, 3, 1, 2).float())


def test_one_epoch_checkpoints_logs_and_resumes(tiny_faces: FaceSet, tmp_path: Path) -> None:
    config = TrainConfig(head="arcface", stem="standard", epochs=1, batch_size=8, device="cpu", bf16=False,
                         distill_weight=30.0)
    record = train(config, tiny_faces, tmp_path, log=lambda _: None)
    assert record["epoch"] == 1 and math.isfinite(record["loss"])
    assert 0.0 < record["distill_loss"] <= 2.0 and record["arcface_loss"] > 0
    assert 0.0 <= record["one_shot_rank1"] <= 1.0 and 0.0 <= record["closest_is_positive_accuracy"] <= 1.0
    assert "lfw_one_shot_rank1" not in record  # validation never looks at LFW
    # how much of the teacher the projection has learnt, on the held-out identities' own targets
    assert -1.0 <= record["distill_cosine"] <= 1.0 and 0.0 <= record["projection_one_shot_rank1"] <= 1.0
    assert (tmp_path / CHECKPOINT_FILE).exists() and (tmp_path / WEIGHTS_FILE).exists()
    messages: list[str] = []
    resumed = train(TrainConfig(**{**config.__dict__, "epochs": 2}), tiny_faces, tmp_path, log=messages.append)
    assert any("resumed from epoch 1" in m for m in messages)
    assert resumed["epoch"] == 2
    epochs = [json.loads(line)["epoch"] for line in (tmp_path / LOG_FILE).read_text().splitlines()]
    assert epochs == [1, 2]


def _with_unlabelled(faces: FaceSet) -> FaceSet:
    """`faces` plus its last two training identities' photos again as unlabelled rows (with their teacher
    targets): faces the teacher describes but no identity label comes with."""
    from facerec.train.data import UNLABELLED

    train = faces.rows("train")[-8:]
    return FaceSet(np.concatenate([faces.images, faces.images[train]]), faces.identities + [UNLABELLED] * 8,
                   faces.splits + ["train"] * 8, faces.paths + [f"unlabelled/{i}" for i in range(8)],
                   np.concatenate([faces.teacher, faces.teacher[train]]))


def test_unlabelled_rows_teach_through_the_teacher_and_never_reach_the_arcface_head(tiny_faces: FaceSet,
                                                                                  tmp_path: Path) -> None:
    """#27: an unlabelled row gets label -1; a batch of them alone gives ArcFace nothing (0) and distillation
    a loss; a run mixing them trains and records how many there were; without distillation it is refused."""
    from facerec.train.loop import _build_parts, _step

    faces = _with_unlabelled(tiny_faces)
    config = TrainConfig(head="arcface", stem="standard", epochs=1, batch_size=8, device="cpu", bf16=False,
                         distill_weight=30.0)
    parts = _build_parts(config, faces, torch.device("cpu"))
    labels = parts.labels.numpy()
    assert (labels == -1).sum() == 8 and labels.max() == 5  # six identities keep labels 0..5
    arcface, distill, *_ = _step(config, False, torch.device("cpu"), parts, np.flatnonzero(labels == -1))
    assert float(arcface) == 0.0 and float(distill) > 0.0
    arcface, distill, *_ = _step(config, False, torch.device("cpu"), parts, np.flatnonzero(labels >= 0)[:8])
    assert float(arcface) > 0.0 and float(distill) > 0.0
    record = train(config, faces, tmp_path, log=lambda _: None)
    assert math.isfinite(record["loss"])
    assert json.loads((tmp_path / "config.json").read_text())["unlabelled_images"] == 8
    with pytest.raises(InvalidArgument, match="distillation weight"):
        _build_parts(TrainConfig(**{**config.__dict__, "distill_weight": 0.0}), faces, torch.device("cpu"))


def test_similarity_structure_loss_is_zero_only_when_the_cosines_are_the_teachers() -> None:
    from facerec.train.distill import similarity_structure_loss

    torch.manual_seed(0)
    teacher = torch.nn.functional.normalize(torch.randn(6, 128), dim=1)
    same = torch.cat([teacher, torch.zeros(6, 384)], dim=1) * 3.0  # the teacher's geometry, at another scale
    assert float(similarity_structure_loss(same, teacher)) < 1e-10
    rotated = same @ torch.linalg.qr(torch.randn(512, 512))[0]  # cosines survive a rotation
    assert float(similarity_structure_loss(rotated, teacher)) < 1e-10
    other = torch.randn(6, 512)
    assert float(similarity_structure_loss(other, teacher)) > 1e-3
    with_missing = torch.cat([teacher, torch.full((1, 128), float("nan"))])
    assert float(similarity_structure_loss(torch.cat([same, torch.randn(1, 512)]), with_missing)) < 1e-10
    assert float(similarity_structure_loss(other[:1], teacher[:1])) == 0.0  # one row: no pair


def test_training_with_the_structure_term_logs_it(tiny_faces: FaceSet, tmp_path: Path) -> None:
    config = TrainConfig(head="arcface", stem="standard", epochs=1, batch_size=8, device="cpu", bf16=False,
                         distill_weight=30.0, structure_weight=100.0)
    record = train(config, tiny_faces, tmp_path, log=lambda _: None)
    assert 0.0 < record["structure_loss"] <= 4.0
    assert math.isclose(record["loss"], record["arcface_loss"] + 30.0 * record["distill_loss"]
                        + 100.0 * record["structure_loss"], rel_tol=1e-6)


def test_the_reference_model_teaches_on_the_students_own_pixels(tiny_faces: FaceSet, tmp_path: Path) -> None:
    """A second teacher (the shipped model, onnxruntime): on real crops its embedding is the one the app computes
    (one view), a student warm-started from it already points along it (loss ~0), a fresh standard-stem student
    does not; a run with it logs the term in the loss; a weight without a model is refused."""
    from facerec.faces.embed import FaceEmbedder as RuntimeEmbedder
    from facerec.settings import Settings
    from facerec.train.loop import _build_parts
    from facerec.train.reference import ReferenceEmbedder, reference_loss
    from facerec.train.warm_start import load_onnx_weights

    shipped = Settings().model_path
    reference = ReferenceEmbedder(shipped, threads=1)
    batch = torch.from_numpy(tiny_faces.images[:8]).permute(0, 3, 1, 2).float()
    taught = reference(batch)
    runtime = RuntimeEmbedder(shipped, flip_tta=False).embed_single_view(tiny_faces.images[:8])
    assert np.allclose(taught.numpy(), runtime, atol=1e-4)
    warm = load_onnx_weights(shipped, tiny_faces.images[8:]).eval()
    with torch.no_grad():
        assert float(reference_loss(warm(batch), taught)) < 0.01
        assert float(reference_loss(FaceEmbedder("standard").eval()(batch), taught)) > 0.2
    config = TrainConfig(head="arcface", stem="standard", epochs=1, batch_size=8, device="cpu", bf16=False,
                         distill_weight=30.0, reference_model=str(shipped), reference_weight=10.0)
    record = train(config, tiny_faces, tmp_path, log=lambda _: None)
    assert 0.0 < record["reference_loss"] <= 2.0
    assert math.isclose(record["loss"], record["arcface_loss"] + 30.0 * record["distill_loss"]
                        + 10.0 * record["reference_loss"], rel_tol=1e-6)
    with pytest.raises(InvalidArgument, match="reference model"):
        _build_parts(TrainConfig(**{**config.__dict__, "reference_model": None}), tiny_faces, torch.device("cpu"))


def test_fused_targets_have_the_fused_packs_cosines_and_keep_rows_without_a_teacher_out() -> None:
    """#61 item 5: the structure term toward the fused pack asks for share x the teacher's cosine + the rest x the
    reference's (the join's arithmetic), whatever the reference embedding's length."""
    from facerec.train.distill import fused_targets, similarity_structure_loss

    torch.manual_seed(1)
    teacher = torch.nn.functional.normalize(torch.randn(6, 128), dim=1)
    reference = torch.randn(6, 512) * 5.0
    fused = fused_targets(teacher, reference, 0.9)
    unit_reference = torch.nn.functional.normalize(reference, dim=1)
    expected = 0.9 * teacher @ teacher.T + 0.1 * unit_reference @ unit_reference.T
    assert torch.allclose(fused @ fused.T, expected, atol=1e-6)
    assert float(similarity_structure_loss(fused, fused)) < 1e-10
    dlib_alone = torch.cat([teacher, torch.zeros(6, 384)], 1)  # a student with the teacher's cosines alone
    gap = (0.1 * (teacher @ teacher.T - unit_reference @ unit_reference.T))[~torch.eye(6, dtype=torch.bool)]
    assert math.isclose(float(similarity_structure_loss(dlib_alone, fused)), float((gap ** 2).mean()), rel_tol=1e-4)
    missing = fused_targets(torch.cat([teacher, torch.full((1, 128), float("nan"))]), torch.randn(7, 512), 0.9)
    assert torch.isnan(missing[6, 0]) and not torch.isnan(missing[:6]).any()


def test_training_toward_the_fused_scores_logs_the_structure_term_and_refuses_it_alone(tiny_faces: FaceSet,
                                                                                         tmp_path: Path) -> None:
    from facerec.settings import Settings
    from facerec.train.loop import _build_parts

    shipped = str(Settings().model_path)
    config = TrainConfig(head="arcface", stem="standard", epochs=1, batch_size=8, device="cpu", bf16=False,
                         distill_weight=30.0, structure_weight=100.0, reference_model=shipped, fused_share=0.9)
    record = train(config, tiny_faces, tmp_path, log=lambda _: None)
    assert 0.0 < record["structure_loss"] <= 4.0 and "reference_loss" not in record
    assert math.isclose(record["loss"], record["arcface_loss"] + 30.0 * record["distill_loss"]
                        + 100.0 * record["structure_loss"], rel_tol=1e-6)
    for change in ({"reference_model": None}, {"structure_weight": 0.0}, {"fused_share": 1.5}):
        with pytest.raises(InvalidArgument, match="reference model|fused share"):
            _build_parts(TrainConfig(**{**config.__dict__, **change}), tiny_faces, torch.device("cpu"))


def test_the_train_command_refuses_a_reference_weight_without_a_model_in_one_line(tmp_path: Path) -> None:
    """Checked before the 30,000 crops are read: one line, exit code 1, no traceback."""
    import subprocess
    import sys

    for extra, says in ((["--reference-weight", "10"], "needs --reference-model"),
                        (["--reference-model", str(tmp_path / "missing.onnx"), "--reference-weight", "10"],
                         "no such model")):
        done = subprocess.run([sys.executable, "-m", "facerec.train.cli", "train", "--run-dir", str(tmp_path / "run"),
                               *extra], capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_stop_after_epoch_keeps_the_full_schedule_and_resumes(tiny_faces: FaceSet, tmp_path: Path) -> None:
    """A run cut short by --stop-after-epoch learns under the schedule of all its epochs (its learning rate has
    not decayed to zero), and the same command without the cut finishes it."""
    config = TrainConfig(head="arcface", stem="standard", epochs=2, batch_size=8, device="cpu", bf16=False,
                         distill_weight=30.0, warmup_epochs=0.5)
    messages: list[str] = []
    cut = train(TrainConfig(**{**config.__dict__, "stop_after_epoch": 1}), tiny_faces, tmp_path / "cut",
                log=messages.append)
    assert cut["epoch"] == 1 and cut["lr"] > config.lr * 0.4  # mid-schedule, not annealed
    messages.clear()
    train(TrainConfig(**{**config.__dict__, "stop_after_epoch": 1}), tiny_faces, tmp_path / "cut",
          log=messages.append)
    assert any("stopping after epoch 1 of 2" in m for m in messages)  # a rerun with the cut trains nothing more
    finished = train(config, tiny_faces, tmp_path / "cut", log=lambda _: None)
    assert finished["epoch"] == 2 and finished["lr"] < cut["lr"]


def test_onnx_export_matches_torch_on_real_faces(tiny_faces: FaceSet, tmp_path: Path) -> None:
    config = TrainConfig(head="arcface", stem="high_res", epochs=1, batch_size=8, device="cpu", bf16=False)
    train(config, tiny_faces, tmp_path / "run", log=lambda _: None)
    model = load_embedder(tmp_path / "run" / WEIGHTS_FILE)
    export_onnx(model, tmp_path / "model.onnx")
    assert max_difference(model, tmp_path / "model.onnx", tiny_faces.images[:16]) < 1e-3


def test_shipped_model_has_a_card_with_thresholds_and_checksum() -> None:
    import hashlib

    from facerec.settings import Settings

    settings = Settings()
    card = settings.model_card()
    assert card["sha256"] == hashlib.sha256(settings.model_path.read_bytes()).hexdigest()
    assert settings.model_path.stat().st_size < 50 * 1024 * 1024
    assert 0.0 < card["thresholds"]["far_1e-2"]["cosine"] < card["thresholds"]["far_1e-3"]["cosine"] < 1.0
