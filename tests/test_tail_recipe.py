"""Model v9's recipe parts (facerec.train.lookalikes, facerec.train.strict_threshold_loss, the moving average, flip-invariant
targets): each does what its docstring says on real teacher targets, and a short training run with all of them
logs its terms. Their effect at the same steps is measured by benchmarks/recipe_diagnostic.py, not here."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from facerec.train.loop import TrainConfig, flip_invariant, moving_average, train  # noqa: E402
from facerec.train.lookalikes import LookalikeRows, nearest_identities  # noqa: E402
from facerec.train.strict_threshold_loss import EmbeddingMemory, tail_loss  # noqa: E402
from test_train import tiny_faces  # noqa: E402,F401 - the shared fixture


def test_nearest_identities_are_the_teachers_closest_other_people(tiny_faces):
    rows = tiny_faces.rows("train")
    labels = tiny_faces.labels(rows)
    targets = tiny_faces.teacher[rows]
    nearest = nearest_identities(targets, labels, k=2)
    means = np.stack([targets[labels == k].sum(axis=(0, 1)) for k in range(labels.max() + 1)])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    similarities = means @ means.T
    np.fill_diagonal(similarities, -np.inf)
    assert nearest.shape == (labels.max() + 1, 2)
    assert np.array_equal(nearest[:, 0], similarities.argmax(axis=1))
    assert all(k not in nearest[k] for k in range(len(nearest)))


def test_lookalike_rows_come_in_pairs_of_alike_identities(tiny_faces):
    labels = tiny_faces.labels(tiny_faces.rows("train"))
    nearest = nearest_identities(tiny_faces.teacher[tiny_faces.rows("train")], labels, k=1)
    rows = LookalikeRows(labels, nearest).rows(np.random.default_rng(0), 40)
    assert len(rows) == 40
    for start in range(0, 40, 4):  # identity a (2 photos), then its nearest b (2 photos)
        first, second = labels[rows[start]], labels[rows[start + 2]]
        assert labels[rows[start + 1]] == first and labels[rows[start + 3]] == second
        assert second == nearest[first, 0]


def test_the_tail_term_pushes_the_hardest_impostors_below_the_strict_threshold():
    """Two people whose faces sit close together among many others: a gradient step on the tail term moves them
    apart (the impostor pair above the strict threshold) and leaves the count of genuine pairs below it no worse."""
    generator = torch.Generator().manual_seed(0)
    base = torch.nn.functional.normalize(torch.randn(64, 32, generator=generator), dim=1)
    embeddings = torch.cat([base, base + 0.05 * torch.randn(64, 32, generator=generator)])  # 64 people, 2 photos
    embeddings[64] = embeddings[1] + 0.01  # person 0's second photo looks like person 1
    labels = torch.cat([torch.arange(64), torch.arange(64)])
    embeddings.requires_grad_(True)
    loss = tail_loss(embeddings, labels, EmbeddingMemory(256, 32, torch.device("cpu")))
    assert loss.item() > 0
    loss.backward()
    with torch.no_grad():
        moved = embeddings - 5.0 * embeddings.grad
    unit = torch.nn.functional.normalize
    before = float(unit(embeddings[64:65].detach(), dim=1) @ unit(embeddings[1:2].detach(), dim=1).T)
    after = float(unit(moved[64:65], dim=1) @ unit(moved[1:2], dim=1).T)
    assert after < before


def test_the_memory_keeps_the_latest_embeddings_in_a_ring():
    memory = EmbeddingMemory(4, 2, torch.device("cpu"))
    for step in range(3):
        memory.add(torch.tensor([[1.0, 0.0], [0.0, 1.0]]) * (step + 1), torch.tensor([2 * step, 2 * step + 1]))
    assert memory.filled == 4 and sorted(memory.labels.tolist()) == [2, 3, 4, 5]
    assert torch.allclose(memory.embeddings.norm(dim=1), torch.ones(4))


def test_the_moving_average_and_flip_invariant_targets():
    average, model = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    kept = average.weight.detach().clone()
    moving_average(average, model, 0.9)
    assert torch.allclose(average.weight, 0.9 * kept + 0.1 * model.weight)
    targets = np.random.default_rng(0).normal(size=(5, 2, 128)).astype(np.float32)
    targets /= np.linalg.norm(targets, axis=2, keepdims=True)
    targets[4] = np.nan
    both = flip_invariant(targets)
    assert np.allclose(both[:4, 0], both[:4, 1]) and np.allclose(np.linalg.norm(both[:4, 0], axis=1), 1.0)
    assert np.isnan(both[4]).all()


def test_a_run_with_every_part_logs_its_terms(tiny_faces, tmp_path: Path):
    config = TrainConfig(head="arcface", stem="standard", epochs=1, batch_size=8, device="cpu", bf16=False,
                         distill_weight=30.0, lookalike_share=0.5, tail_weight=1.0, tail_memory=64,
                         ema_decay=0.9, flip_invariant_targets=True)
    record = train(config, tiny_faces, tmp_path, log=lambda _: None)
    assert record["tail_loss"] >= 0.0 and "one_shot_rank1" in record
    assert math.isclose(record["loss"], record["arcface_loss"] + 30.0 * record["distill_loss"]
                        + record["tail_loss"], rel_tol=1e-5)
