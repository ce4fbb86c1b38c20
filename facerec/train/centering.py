"""Centering: subtract (a share of) the mean training embedding inside the ONNX graph, then normalise again.

Why: the student's unit embeddings share a common direction (the mean of training faces' embeddings has length
~0.33, where a spread-out set would be ~0), so every face is a little similar to every other. Faces that lie
along that direction become "hubs" that turn up as everyone's nearest neighbour, which costs one-shot rank-1 and
grows with the gallery. Subtracting `strength` x the mean and renormalising spreads the faces out; the strength is
chosen on held-out identities (`benchmarks/embedding_options.py --center`), never on LFW.

The mean comes from training crops only (2,000 photos drawn with a fixed seed from every non-held-out celeba112
photo: a draw over photos, not one photo per identity, because the first photo of each identity is a different
population, its mean half as long), embedded by the very model being edited, so the edit is deterministic and
the edited file stays an onnxruntime-only embedder with the same input and output names. The runtime does not
know it exists. A warm start reads only the network's weights (`facerec.train.warm_start`), so the next training
stage starts from the uncentered network, and its center is derived again after it (`uncentered_copy` gives
that network as ONNX).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from PIL import Image

from ..dataset import held_out_identities, list_identities
from .graph_edit import reroute_output, without_edit

CENTERING_PHOTOS = 2000
CENTERING_SEED = 1
CENTER_NAME = "embedding_center"  # the subtracted vector's initializer
EDIT_NODES = ("center_subtract", "center_normalize")  # the two nodes the edit appends
UNCENTERED = "_uncentered"  # suffix of the network's own output once the edit follows it


def training_photos(celeba_dir: str | Path) -> list[Path]:
    """Every celeba112 photo of a training identity (never a held-out one), in name then file order: what the
    graph edits fitted after training draw from."""
    identities = list_identities(celeba_dir)
    held_out = held_out_identities(identities)
    return [photo for name in sorted(identities) if name not in held_out for photo in identities[name]]


def centering_crops(celeba_dir: str | Path, count: int = CENTERING_PHOTOS) -> np.ndarray:
    """uint8 [count, 112, 112, 3]: aligned training crops drawn with a fixed seed (never a held-out identity)."""
    photos = training_photos(celeba_dir)
    chosen = random.Random(CENTERING_SEED).sample(photos, min(count, len(photos)))
    return np.stack([np.asarray(Image.open(photo).convert("RGB")) for photo in chosen])


def mean_embedding(model: str | Path, crops: np.ndarray, batch_size: int = 64) -> np.ndarray:
    """float32 [512]: the mean of the model's unit embeddings of `crops` (one view each, no mirror)."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    total = None
    for start in range(0, len(crops), batch_size):
        batch = crops[start:start + batch_size].transpose(0, 3, 1, 2).astype(np.float32)
        summed = session.run(None, {session.get_inputs()[0].name: batch})[0].sum(axis=0)
        total = summed if total is None else total + summed
    return (total / len(crops)).astype(np.float32)


def center_onnx(model: str | Path, out: str | Path, center: np.ndarray) -> Path:
    """Write `model` with `center` (float32 [512]) subtracted from its unit output and the result renormalised
    (Sub, then LpNormalization p=2), under the same output name."""
    import onnx
    from onnx import helper, numpy_helper

    proto = onnx.load(str(model))
    graph = proto.graph
    if any(init.name == CENTER_NAME for init in graph.initializer):
        raise ValueError(f"{model} is centered already")
    uncentered, output = reroute_output(graph, UNCENTERED)
    graph.initializer.append(numpy_helper.from_array(np.asarray(center, np.float32)[None, :], CENTER_NAME))
    graph.node.extend([
        helper.make_node("Sub", [uncentered, CENTER_NAME], [output + "_centered"], name=EDIT_NODES[0]),
        helper.make_node("LpNormalization", [output + "_centered"], [output], name=EDIT_NODES[1], axis=1, p=2),
    ])
    onnx.checker.check_model(proto)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(out))
    return Path(out)


def centered_copy(model: str | Path, out: str | Path, crops: np.ndarray, strength: float) -> Path:
    """`center_onnx` with `strength` x the model's own mean embedding of the training `crops`."""
    return center_onnx(model, out, strength * mean_embedding(model, crops))


def uncentered_copy(model: str | Path, out: str | Path) -> Path:
    """Write `model` without its centering (the network's own unit output); an uncentered model is copied."""
    return without_edit(model, out, EDIT_NODES, (CENTER_NAME,), UNCENTERED)


def embedding_center(model: str | Path) -> np.ndarray | None:
    """The center a model subtracts (None: not centered): what the model card reports."""
    import onnx
    from onnx import numpy_helper

    for init in onnx.load(str(model)).graph.initializer:
        if init.name == CENTER_NAME:
            return numpy_helper.to_array(init)[0]
    return None
