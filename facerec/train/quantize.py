"""int8 ONNX: static per-channel quantisation (onnxruntime QDQ) of an exported fp32 embedder, with 7-bit weights.

Why 7-bit weights: onnxruntime fuses the QDQ graph into uint8-activation x int8-weight (U8S8) kernels. On x86 CPUs
without VNNI (AVX2, and AVX-512 before VNNI) those kernels add pairs of products in 16 bits (VPMADDUBSW), which
saturates when 255 x |w| x 2 exceeds 32,767: with 8-bit weights the same file gave LFW one-shot 0.810 on an AVX2
EPYC and 0.859 on an AVX-512 VNNI Xeon. With weights in [-64, 64] the pair sum stays within 255 x 64 x 2 = 32,640, so
every CPU computes the same integers (`reduce_range`, as onnxruntime's quantisation guide recommends for U8S8 on such
CPUs: symmetric 7-bit weights, whose largest magnitude in each channel is 64).
Measured on held-out identities (`benchmarks/embedding_options.py`): 7-bit keeps one-shot rank-1 within 0.1 point
of fp32, at the same speed as 8-bit (the same kernels run).

Activation ranges are calibrated on training crops only (the first photo of the first 200 non-held-out celeba112
identities), so the result is deterministic and never sees a held-out or evaluation face.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from facerec.errors import InvalidArgument
from facerec.datasets.folders import held_out_identities, list_identities

CALIBRATION_IDENTITIES = 200
SEVEN_BIT = (-64, 63)  # what `seven_bit_copy` halves 8-bit weights into
SAFE_MAGNITUDE = 64  # |weight| <= 64: no 16-bit pair sum of U8S8 products can saturate (255 x 64 x 2 = 32,640)


def calibration_crops(celeba_dir: str | Path) -> np.ndarray:
    """uint8 [200, 112, 112, 3]: one aligned training crop from each of the first 200 training identities."""
    identities = list_identities(celeba_dir)
    held_out = held_out_identities(identities)
    training = [name for name in identities if name not in held_out][:CALIBRATION_IDENTITIES]
    return np.stack([np.asarray(Image.open(identities[name][0]).convert("RGB")) for name in training])


def quantize_int8(model: str | Path, crops: np.ndarray, out: str | Path, batch_size: int = 16) -> Path:
    """Write the int8 QDQ copy (7-bit weights) of the fp32 ONNX `model` to `out`, activations calibrated on
    `crops`."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Batches(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([{"images": crops[i : i + batch_size].transpose(0, 3, 1, 2).astype(np.float32)}
                                 for i in range(0, len(crops), batch_size)])

        def get_next(self):
            return next(self.batches, None)

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    quantize_static(str(model), str(out), Batches(), quant_format=QuantFormat.QDQ, per_channel=True,
                    reduce_range=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return Path(out)


def weight_range(model: str | Path) -> tuple[int, int]:
    """The lowest and highest quantised weight of an int8 QDQ model (what decides whether U8S8 can saturate)."""
    import onnx
    from onnx import TensorProto, numpy_helper

    graph = onnx.load(str(model)).graph
    weights = [numpy_helper.to_array(t) for t in graph.initializer if t.data_type == TensorProto.INT8]
    if not weights:
        raise InvalidArgument(f"{model} has no int8 weights")
    return min(int(w.min()) for w in weights), max(int(w.max()) for w in weights)


def seven_bit_copy(model: str | Path, out: str | Path) -> Path:
    """Write a copy of an 8-bit-weight int8 QDQ model whose weights are 7-bit: q7 = round(q8 / 2) in [-64, 63],
    the scale doubled; int32 biases (scale = input scale x weight scale) halved with it.

    For a shipped 8-bit model whose fp32 export was not kept (model v8): it rounds twice, once more than
    `quantize_int8` from fp32 would, and benchmarks/embedding_options.py measures what that costs."""
    import onnx
    from onnx import TensorProto, numpy_helper

    graph_model = onnx.load(str(model))
    graph = graph_model.graph
    tensors = {t.name: t for t in graph.initializer}

    def replace(name: str, array: np.ndarray) -> None:
        tensors[name].CopyFrom(numpy_helper.from_array(array, name))

    for node in graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in tensors:
            continue
        values, kind = numpy_helper.to_array(tensors[node.input[0]]), tensors[node.input[0]].data_type
        scale = numpy_helper.to_array(tensors[node.input[1]])
        if kind == TensorProto.INT8:
            replace(node.input[0], np.clip(np.round(values.astype(np.float64) / 2), *SEVEN_BIT).astype(np.int8))
        elif kind == TensorProto.INT32:
            replace(node.input[0], np.round(values.astype(np.float64) / 2).astype(np.int32))
        else:
            continue
        replace(node.input[1], (scale * 2).astype(scale.dtype))
    onnx.checker.check_model(graph_model)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(graph_model, str(out))
    return Path(out)


def dequantized_copy(model: str | Path, out: str | Path) -> Path:
    """Write the fp32 graph of an int8 QDQ model: weights dequantised into fp32 initialisers, activations no longer
    quantised (a quantise/dequantise pair with zero point 0 becomes the ReLU it stood for). The nearest fp32
    reference to a shipped int8 model whose fp32 export was not kept."""
    import onnx
    from onnx import helper, numpy_helper

    graph_model = onnx.load(str(model))
    graph = graph_model.graph
    tensors = {t.name: t for t in graph.initializer}
    quantised_from = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "QuantizeLinear"}
    renamed, kept, weights = {}, [], []
    for node in graph.node:
        if node.op_type == "QuantizeLinear":
            continue
        if node.op_type == "DequantizeLinear" and node.input[0] in tensors:
            weights.append(numpy_helper.from_array(_dequantize(node, tensors), node.output[0]))
        elif node.op_type == "DequantizeLinear" and node.input[0] in quantised_from:
            source = quantised_from[node.input[0]]
            if int(numpy_helper.to_array(tensors[node.input[2]])) == 0:  # the quantiser folded a ReLU into it
                kept.append(helper.make_node("Relu", [source], [node.output[0]]))
            else:
                renamed[node.output[0]] = source
        else:
            kept.append(node)
    for node in kept:
        for i, name in enumerate(node.input):
            while name in renamed:
                name = renamed[name]
            node.input[i] = name
    used = {name for node in kept for name in node.input}
    initialisers = [t for t in graph.initializer if t.name in used] + [w for w in weights if w.name in used]
    del graph.node[:], graph.initializer[:]
    graph.node.extend(kept)
    graph.initializer.extend(initialisers)
    onnx.checker.check_model(graph_model)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(graph_model, str(out))
    return Path(out)


def _dequantize(node, tensors) -> np.ndarray:
    """(q - zero point) x scale of a weight's DequantizeLinear, per channel along its axis."""
    from onnx import numpy_helper

    values = numpy_helper.to_array(tensors[node.input[0]]).astype(np.float64)
    scale = numpy_helper.to_array(tensors[node.input[1]]).astype(np.float64)
    zero = numpy_helper.to_array(tensors[node.input[2]]).astype(np.float64) if len(node.input) > 2 else 0.0
    if scale.ndim == 1 and values.ndim > 1:
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        shape = [1] * values.ndim
        shape[axis] = -1
        scale, zero = scale.reshape(shape), np.reshape(zero, shape) if np.ndim(zero) else zero
    return ((values - zero) * scale).astype(np.float32)
