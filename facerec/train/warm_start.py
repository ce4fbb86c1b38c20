"""Warm start: torch weights recovered from a shipped ONNX embedder, optionally moved to the standard stem.

Training compute is the scarcest thing here, so a new model starts from the last one. The ONNX exporter folded
each convolution's batch-norm into the convolution (weight W', bias b'); `load_onnx_weights` maps them back onto
the torch modules in graph order and rebuilds each batch-norm from the statistics of its convolution's output on
real faces (mean and variance of W'x), so that the network computes exactly the exported function in eval mode
AND keeps the same per-channel scales once batch statistics are used in training.

`to_standard_stem` turns a high-resolution-stem model (3x3/1 first convolution) into a standard-stem one
(7x7/2): the 3x3 kernel is placed at the centre of the 7x7 one, so the new first convolution computes the old
one's output at every second pixel, and every later stage sees the same features at half the resolution. The
global depthwise kernel shrinks from 7x7 to 4x4 by area pooling, scaled to keep its sum.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from facerec.train.backbone import FaceEmbedder


def load_onnx_weights(onnx_path: str | Path, calibration_faces: np.ndarray) -> FaceEmbedder:
    """A FaceEmbedder whose eval-mode output equals the ONNX model's (before the final normalisation).
    calibration_faces: uint8 [N, 112, 112, 3] aligned crops (a few hundred) for the batch-norm statistics."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_path)).graph
    weights = _float_constants(graph, numpy_helper)
    convs = [(node.input[1], node.input[2] if len(node.input) > 2 else None)
             for node in graph.node if node.op_type == "Conv"]
    stem = "high_res" if weights[convs[0][0]].shape[-1] == 3 else "standard"
    model = FaceEmbedder(stem).eval()
    pairs = _conv_batchnorm_pairs(model)
    used = [False] * len(convs)
    fused_bias: dict[nn.Conv2d, torch.Tensor] = {}
    for conv, norm in pairs:
        k = next(i for i, (w, _) in enumerate(convs) if not used[i] and weights[w].shape == conv.weight.shape)
        used[k] = True
        conv.weight.data.copy_(weights[convs[k][0]])
        fused_bias[conv] = weights[convs[k][1]] if convs[k][1] else torch.zeros(conv.out_channels)
        _set_batchnorm(norm, torch.zeros(conv.out_channels), torch.ones(conv.out_channels), fused_bias[conv])
    norms = [node for node in graph.node if node.op_type == "BatchNormalization"]  # not folded: head.0, head.6
    for name, node in zip(("head.0", "head.6"), norms):
        norm = model.get_submodule(name)
        for field, source in zip(("weight", "bias", "running_mean", "running_var"), node.input[1:5]):
            getattr(norm, field).data.copy_(weights[source])
    matmul = next(node for node in graph.node if node.op_type in ("MatMul", "Gemm"))
    model.get_submodule("head.5").weight.data.copy_(weights[matmul.input[1]].T)
    _calibrate_batchnorms(model, pairs, fused_bias, calibration_faces)
    return model


def _float_constants(graph, numpy_helper) -> dict[str, torch.Tensor]:
    """Every constant tensor of the graph as float32 torch tensors, by name: initializers, and the outputs of
    DequantizeLinear nodes over initializers (an int8 QDQ model's weights: (q - zero_point) * scale)."""
    arrays = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    out = {name: torch.from_numpy(np.asarray(a, np.float32).copy()) for name, a in arrays.items()}
    for node in graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in arrays:
            continue
        quantized = arrays[node.input[0]].astype(np.float32)
        scale = arrays[node.input[1]].astype(np.float32)
        zero = arrays[node.input[2]].astype(np.float32) if len(node.input) > 2 else np.zeros_like(scale)
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        if scale.ndim == 1 and quantized.ndim > 1:  # per channel along `axis`
            shape = [1] * quantized.ndim
            shape[axis] = -1
            scale, zero = scale.reshape(shape), zero.reshape(shape)
        out[node.output[0]] = torch.from_numpy((quantized - zero) * scale)
    return out


def to_standard_stem(model: FaceEmbedder) -> FaceEmbedder:
    """A standard-stem copy of a high_res-stem model computing the same features at half the resolution."""
    if model.stem_name == "standard":
        return model
    target = FaceEmbedder("standard")
    source_state = model.state_dict()
    state = {}
    for name, value in target.state_dict().items():
        old = source_state[name]
        if name == "features.0.weight":  # 3x3 at the centre of 7x7: stride-2 samples of the old map
            value = torch.zeros_like(value)
            value[:, :, 2:5, 2:5] = old
        elif name == "head.2.weight":  # global depthwise conv 7x7 -> 4x4, same total weight
            value = F.adaptive_avg_pool2d(old, value.shape[-1]) * (old.shape[-1] ** 2 / value.shape[-1] ** 2)
        else:
            value = old
        state[name] = value
    target.load_state_dict(state)
    return target.eval()


def _conv_batchnorm_pairs(model: FaceEmbedder) -> list[tuple[nn.Conv2d, nn.BatchNorm2d]]:
    """Every convolution with the batch-norm that follows it, in forward order (downsample convs included)."""
    modules = list(model.named_modules())
    pairs = []
    for i, (_, module) in enumerate(modules):
        if isinstance(module, nn.Conv2d):
            following = next(m for _, m in modules[i + 1 :] if isinstance(m, nn.BatchNorm2d))
            pairs.append((module, following))
    return pairs


def _set_batchnorm(norm: nn.BatchNorm2d, mean: torch.Tensor, variance: torch.Tensor, bias: torch.Tensor) -> None:
    """Make `norm` map z to (z - mean) / std * std + mean + bias = z + bias in eval mode, while keeping the
    channel's natural scale std as its learnable gain for training."""
    std = torch.sqrt(variance + norm.eps)
    norm.running_mean.data.copy_(mean)
    norm.running_var.data.copy_(variance)
    norm.weight.data.copy_(std)
    norm.bias.data.copy_(mean + bias)


@torch.no_grad()
def _calibrate_batchnorms(model, pairs, fused_bias, faces: np.ndarray) -> None:
    outputs: dict[nn.Conv2d, torch.Tensor] = {}
    hooks = [conv.register_forward_hook(lambda module, _, out: outputs.__setitem__(module, out))
             for conv, _ in pairs]
    batch = torch.from_numpy(np.ascontiguousarray(faces)).permute(0, 3, 1, 2).float()
    model.eval()(batch)
    for hook in hooks:
        hook.remove()
    for conv, norm in pairs:
        z = outputs[conv]
        _set_batchnorm(norm, z.mean(dim=(0, 2, 3)), z.var(dim=(0, 2, 3), unbiased=False), fused_bias[conv])
