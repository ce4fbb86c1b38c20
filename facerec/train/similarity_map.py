"""The similarity map: a linear map appended to the ONNX embedder so that its cosine similarities blend its own
with the teacher's.

Why: the student's 512-d embedding separates the people it was trained on (ArcFace), but how similar two
*different* people look, the structure that decides a stranger's nearest neighbour, is where the teacher (dlib,
~3 million faces) is better. A map x -> normalize(x A - b), with A [512, 512] and b [512] fitted on training crops
so that cos(map(x_i), map(x_j)) ~= keep * cos(x_i, x_j) + (1 - keep) * cos(t_i, t_j) (t: the teacher's centred
descriptors), moves the embedding's geometry part of the way to the teacher's. The offset b also does what
centering did (it removes the common direction), so a mapped model is not centered as well. Measured on the
held-out identities before it was built (int8 + flip, one-shot rank-1 over 30 draws): 0.8175 uncentered, 0.8213
centered at 0.75, 0.827 mapped with keep 0.7 (keep 1.0 is the identity; 0.0, the teacher alone, gave 0.808).
`keep` is chosen on held-out identities (`benchmarks/embedding_options.py --similarity-map`), never on LFW.

The fit: Adam on the mean squared difference of the two similarity matrices over random batches of the training
views (each crop and its mirror, as the runtime sees both), from A = I, b = 0, with a fixed seed, so the same
model and data give the same map. The edited file stays an onnxruntime-only embedder with the same input and
output names: MatMul, Sub and LpNormalization after the network's own unit output. A warm start reads only the
network's weights (`facerec.train.warm_start`), so a next training stage starts from the unmapped network.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from PIL import Image

from .centering import CENTER_NAME, training_photos
from .graph_edit import reroute_output, without_edit

MAP_PHOTOS = 6000
MAP_SEED = 7
MAP_NAMES = ("similarity_map_matrix", "similarity_map_offset")  # the appended initializers
MAP_NODES = ("similarity_map_matmul", "similarity_map_subtract", "similarity_map_normalize")
UNMAPPED = "_unmapped"  # suffix of the network's own output once the map follows it
FIT_STEPS, FIT_BATCH, FIT_LR = 1000, 512, 1e-3


def fitting_photos(celeba_dir: str | Path, count: int = MAP_PHOTOS) -> list[Path]:
    """Training photos drawn with a fixed seed (never a held-out identity): the crops the map is fitted on."""
    photos = training_photos(celeba_dir)
    return random.Random(MAP_SEED).sample(photos, min(count, len(photos)))


def teacher_views(photos: list[Path], teacher_file: str | Path) -> np.ndarray:
    """float32 [2N, 128]: unit, centred teacher targets of each photo, then of each mirrored photo (the centre:
    the mean of these descriptors). Raises ValueError when the teacher file lacks a photo or its mirror."""
    from .teacher import normalized_targets

    with np.load(teacher_file) as data:
        if "descriptor_mirror" not in data:
            raise ValueError(f"{teacher_file} has no mirrored descriptors")
        index = {str(path): row for row, path in enumerate(data["paths"].tolist())}
        keys = [f"{photo.parent.name}/{photo.name}" for photo in photos]
        missing = [key for key in keys if key not in index]
        if missing:
            raise ValueError(f"{teacher_file} has no descriptor of {missing[0]}")
        rows = [index[key] for key in keys]
        raw = np.concatenate([data["descriptor"][rows], data["descriptor_mirror"][rows]]).astype(np.float64)
    return normalized_targets(raw, raw.mean(axis=0)).astype(np.float32)


def model_views(model: str | Path, photos: list[Path], batch_size: int = 64) -> np.ndarray:
    """float32 [2N, 512]: the model's unit output for each photo, then for each mirrored photo."""
    from ..embed import FaceEmbedder

    embedder = FaceEmbedder(Path(model), flip_tta=False)
    plain, mirrored = [], []
    for start in range(0, len(photos), batch_size):
        crops = np.stack([np.asarray(Image.open(p).convert("RGB")) for p in photos[start:start + batch_size]])
        plain.append(embedder.embed_single_view(crops))
        mirrored.append(embedder.embed_single_view(np.ascontiguousarray(crops[:, :, ::-1])))
    return np.concatenate(plain + mirrored)


def fit_similarity_map(views: np.ndarray, targets: np.ndarray, keep: float, steps: int = FIT_STEPS,
                       seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(A [D, D], b [D]) such that the cosines of normalize(views A - b) approach keep x the views' own cosines +
    (1 - keep) x the targets' (rows of `views` and `targets` are unit vectors of the same faces)."""
    import torch

    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"keep must be in [0, 1]; got {keep}")
    generator = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(np.asarray(views, np.float32))
    t = torch.from_numpy(np.asarray(targets, np.float32))
    matrix = torch.eye(x.shape[1], requires_grad=True)
    offset = torch.zeros(x.shape[1], requires_grad=True)
    optimizer = torch.optim.Adam([matrix, offset], lr=FIT_LR)
    for _ in range(steps):
        rows = torch.randint(0, len(x), (min(FIT_BATCH, len(x)),), generator=generator)
        wanted = keep * (x[rows] @ x[rows].T) + (1.0 - keep) * (t[rows] @ t[rows].T)
        mapped = torch.nn.functional.normalize(x[rows] @ matrix - offset, dim=1)
        loss = ((mapped @ mapped.T - wanted) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return matrix.detach().numpy().copy(), offset.detach().numpy().copy()


def map_onnx(model: str | Path, out: str | Path, matrix: np.ndarray, offset: np.ndarray) -> Path:
    """Write `model` with normalize(x A - b) applied to its unit output x, under the same output name. Refuses a
    model that is centered or mapped already (the map's offset does the centering)."""
    import onnx
    from onnx import helper, numpy_helper

    proto = onnx.load(str(model))
    graph = proto.graph
    names = {init.name for init in graph.initializer}
    if MAP_NAMES[0] in names:
        raise ValueError(f"{model} has a similarity map already")
    if CENTER_NAME in names:
        raise ValueError(f"{model} is centered: map the uncentered model (the map's offset centers it)")
    unmapped, output = reroute_output(graph, UNMAPPED)
    graph.initializer.extend([numpy_helper.from_array(np.asarray(matrix, np.float32), MAP_NAMES[0]),
                              numpy_helper.from_array(np.asarray(offset, np.float32)[None, :], MAP_NAMES[1])])
    graph.node.extend([
        helper.make_node("MatMul", [unmapped, MAP_NAMES[0]], [output + "_mapped"], name=MAP_NODES[0]),
        helper.make_node("Sub", [output + "_mapped", MAP_NAMES[1]], [output + "_shifted"], name=MAP_NODES[1]),
        helper.make_node("LpNormalization", [output + "_shifted"], [output], name=MAP_NODES[2], axis=1, p=2),
    ])
    onnx.checker.check_model(proto)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(out))
    return Path(out)


def mapped_copy(model: str | Path, out: str | Path, photos: list[Path], teacher_file: str | Path,
                keep: float) -> Path:
    """`map_onnx` with the map fitted to `model`'s own views of `photos` and their teacher targets."""
    targets = teacher_views(photos, teacher_file)  # first: a missing descriptor fails before any embedding
    matrix, offset = fit_similarity_map(model_views(model, photos), targets, keep)
    return map_onnx(model, out, matrix, offset)


def unmapped_copy(model: str | Path, out: str | Path) -> Path:
    """Write `model` without its similarity map (the network's own unit output); an unmapped model is copied."""
    return without_edit(model, out, MAP_NODES, MAP_NAMES, UNMAPPED)


def similarity_map(model: str | Path) -> tuple[np.ndarray, np.ndarray] | None:
    """(A, b) of a mapped model (None: not mapped): what the model card reports."""
    import onnx
    from onnx import numpy_helper

    found = {init.name: numpy_helper.to_array(init) for init in onnx.load(str(model)).graph.initializer
             if init.name in MAP_NAMES}
    return (found[MAP_NAMES[0]], found[MAP_NAMES[1]][0]) if len(found) == 2 else None
