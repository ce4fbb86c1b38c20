"""Weight averaging: one ONNX embedder whose weights are the (weighted) mean of several training stages' weights.

Why: the stages of the recipe are restarts of one cosine schedule from the previous stage's end, so their end
points lie in one basin of the loss, on different sides of it. The mean of such end points sits nearer the basin's
centre and generalises better than any one of them (stochastic weight averaging, Izmailov et al. 2018). Measured
on the held-out identities (fp32, flip, one-shot rank-1 as the mean over 30 draws): v4, v5 and v6 alone 0.816,
0.814, 0.816; their average 0.8175, ClosestIsPositiveAccuracy 0.949 -> 0.952 (benchmarks/stage_average.py). It
costs nothing at run time: the averaged file is the same network.

The exports fold each batch-norm into its convolution, so the average is taken over the folded weights: the mean
of the stages' eval-mode affine maps, layer by layer. Only fp32 exports of one architecture can be averaged: an
int8 file's weights are integers on per-file scales, and a centered file's center belongs to its own network
(quantise and center the average instead, as the recipe does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from facerec.errors import InvalidArgument

QUANTIZATION_OPS = ("DequantizeLinear", "QuantizeLinear")


def average_onnx(models: Sequence[str | Path], out: str | Path, weights: Sequence[float] | None = None) -> Path:
    """Write the first model's graph with every float initializer replaced by the weighted mean of the models'
    (equal weights by default). Raises ValueError, in one line, when the files are not fp32 exports of one
    architecture."""
    import onnx
    from onnx import numpy_helper

    if len(models) < 2:
        raise InvalidArgument("averaging needs at least two models")
    weights = [1.0] * len(models) if weights is None else [float(w) for w in weights]
    if len(weights) != len(models) or min(weights) < 0 or sum(weights) <= 0:
        raise InvalidArgument("give one non-negative weight per model, not all zero")
    protos = [onnx.load(str(model)) for model in models]
    for model, proto in zip(models, protos):
        if any(node.op_type in QUANTIZATION_OPS for node in proto.graph.node):
            raise InvalidArgument(f"{model} is quantised: average the fp32 exports, then quantise the average")
    tensors = [{init.name: numpy_helper.to_array(init) for init in proto.graph.initializer} for proto in protos]
    for model, other in zip(models[1:], tensors[1:]):
        if {name: a.shape for name, a in other.items()} != {name: a.shape for name, a in tensors[0].items()}:
            raise InvalidArgument(f"{model} is not the same architecture as {models[0]}")
    total = sum(weights)
    for init in protos[0].graph.initializer:
        if tensors[0][init.name].dtype != np.float32:
            continue  # shapes and indices: the same in every file
        mean = sum(w * t[init.name].astype(np.float64) for w, t in zip(weights, tensors)) / total
        init.CopyFrom(numpy_helper.from_array(mean.astype(np.float32), init.name))
    onnx.checker.check_model(protos[0])
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(protos[0], str(out))
    return Path(out)
