"""dlib's face ResNet (`dlib_face_recognition_resnet_model_v1.dat`, public domain) read from dlib's own file and
written as an ONNX graph, so onnxruntime runs it with the rest of facerec's stack instead of dlib's runtime.

Why read dlib's serialisation ourselves: dlib's Python module only runs the network (`compute_face_descriptor`);
it exposes no weights. The file is dlib's `serialize()` of the network type of `dnn_face_recognition_ex.cpp`: a
loss layer, every wrapper's version up front, then the input layer and each layer's details from the input to the
output, each followed by its wrapper's training state (three booleans and three tensors, empty here). A tensor is a
version, four compact integers and raw little-endian float32; every other number is dlib's compact integer (a
length byte, 0x80 for the sign, then little-endian bytes) or, for floats, a mantissa and an exponent of two such
integers.

The network: 150x150 RGB, `(pixel - mean) / 256`, a 7x7/2 convolution (no padding), max-pool 3x3/2, then 14
residual blocks of two 3x3 convolutions each (32, 64, 128, 256 and 256 filters; the first block of each width from
64 on has stride 2 and adds a 2x2/2 average pool of its input), a global average and a 256 -> 128 matrix without
bias. Two things are dlib's own and must be reproduced exactly: its convolutions and pools of stride 2 take no
padding, and its `add_prev` adds tensors of different sizes by zero-filling the smaller one (more channels after a
widening, and a 3x3 block output onto a 4x4 pooled input near the end), which the graph writes as a `Pad`.

Every `affine` layer (dlib's frozen batch norm) is folded into the convolution before it, and the mean subtraction
and the division by 256 into the first convolution (it has no padding, so the fold is exact at the borders).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

CHIP_SIZE = 150  # dlib's input: a 150x150 chip (`input_rgb_image_sized<150>`)
DESCRIPTOR_SIZE = 128


@dataclass
class Convolution:
    """One convolution with its folded affine: weights [out, in, k, k], bias [out]."""

    weights: np.ndarray
    bias: np.ndarray
    stride: int
    padding: int


@dataclass
class ResidualBlock:
    """conv -> relu -> conv, plus the block's input (average-pooled 2x2/2 where `downsample`), then relu."""

    first: Convolution
    second: Convolution
    downsample: bool


@dataclass
class DlibResNet:
    """The parsed network: enough to write the graph and nothing of dlib's training state."""

    channel_means: np.ndarray  # RGB, subtracted before the division by 256
    stem: Convolution
    blocks: list[ResidualBlock] = field(default_factory=list)
    projection: np.ndarray = field(default_factory=lambda: np.zeros((256, DESCRIPTOR_SIZE), np.float32))


class DlibFormatError(ValueError):
    """The file is not the network this module knows (another dlib network, or a damaged file)."""


class _Reader:
    """dlib's `deserialize` for the handful of types the face network's file holds."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def integer(self) -> int:
        head = self.data[self.at]
        size = head & 0x0F
        value = int.from_bytes(self.data[self.at + 1 : self.at + 1 + size], "little")
        self.at += 1 + size
        return -value if head & 0x80 else value

    def string(self) -> str:
        size = self.integer()
        text = self.data[self.at : self.at + size].decode("ascii")
        self.at += size
        return text

    def floating(self) -> float:
        mantissa = self.integer()
        return mantissa * 2.0 ** self.integer()

    def boolean(self) -> bool:
        char = self.data[self.at : self.at + 1]
        if char not in (b"0", b"1"):
            raise DlibFormatError(f"expected a boolean at byte {self.at}")
        self.at += 1
        return char == b"1"

    def tensor(self) -> np.ndarray:
        if self.integer() != 2:
            raise DlibFormatError(f"expected a tensor at byte {self.at}")
        shape = [self.integer() for _ in range(4)]
        count = int(np.prod(shape))
        values = np.frombuffer(self.data, "<f4", count, self.at).reshape(shape)
        self.at += 4 * count
        return values

    def alias_shape(self) -> list[int]:
        if self.integer() != 1:
            raise DlibFormatError(f"expected a tensor alias at byte {self.at}")
        return [self.integer() for _ in range(4)]

    def at_layer_name(self) -> bool:
        """Whether a layer's version string starts here (length byte, then a letter)."""
        ahead = self.data[self.at : self.at + 3]
        return len(ahead) == 3 and ahead[0] == 1 and 3 <= ahead[1] <= 40 and chr(ahead[2]).isalpha()

    def skip_training_state(self) -> None:
        """A wrapper's booleans, tensors and counters between two layers' details."""
        while self.at < len(self.data) and not self.at_layer_name():
            if self.data[self.at : self.at + 1] in (b"0", b"1"):
                self.at += 1
            elif self.data[self.at : self.at + 2] == b"\x01\x02":
                self.tensor()
            elif self.data[self.at] & 0x7F in range(1, 9):
                self.integer()
            else:
                raise DlibFormatError(f"unexpected bytes at {self.at}")


def _read_layers(data: bytes) -> tuple[np.ndarray, list[tuple[str, object]]]:
    """The input's channel means and each layer's (kind, parameters), from the input towards the output."""
    reader = _Reader(data)
    marker = b"\x01\x15input_rgb_image_sized"
    if marker not in data:
        raise DlibFormatError("no input_rgb_image_sized layer: not dlib's face recognition network")
    reader.at = data.index(marker)
    reader.string()
    means = np.array([reader.floating() for _ in range(3)], np.float64)
    if [reader.integer(), reader.integer()] != [CHIP_SIZE, CHIP_SIZE]:
        raise DlibFormatError("the input is not 150x150")
    layers: list[tuple[str, object]] = []
    while True:
        reader.skip_training_state()
        if reader.at >= len(data):
            return means, layers
        name = reader.string()
        if name.startswith("con_"):
            params = reader.tensor().reshape(-1)
            _filters, _rows, _cols = reader.integer(), reader.integer(), reader.integer()
            stride, _stride_x, padding, _padding_x = (reader.integer() for _ in range(4))
            weight_shape, bias_shape = reader.alias_shape(), reader.alias_shape()
            for _ in range(4):
                reader.floating()  # learning-rate and weight-decay multipliers
            if name in ("con_5", "con_6"):
                reader.boolean()
            if name == "con_6":
                reader.boolean()
            size = int(np.prod(weight_shape))
            layers.append(("con", Convolution(params[:size].reshape(weight_shape).astype(np.float64),
                                              params[size : size + int(np.prod(bias_shape))].astype(np.float64),
                                              stride, padding)))
        elif name in ("affine_", "affine_2"):
            params = reader.tensor().reshape(-1)
            count = int(np.prod(reader.alias_shape()))
            reader.alias_shape()
            reader.integer()  # mode: per channel
            if name == "affine_2":
                reader.boolean()
            layers.append(("affine", (params[:count].astype(np.float64), params[count : 2 * count].astype(np.float64))))
        elif name.startswith("relu_") or name.startswith("add_prev"):
            layers.append((name.rstrip("_0123456789"), None))
        elif name.startswith("max_pool") or name.startswith("avg_pool"):
            layers.append((name.rstrip("_0123456789"), [reader.integer() for _ in range(6)]))
        elif name.startswith("fc_"):
            _outputs, _inputs = reader.integer(), reader.integer()
            params = reader.tensor().reshape(-1)
            weight_shape = reader.alias_shape()
            reader.alias_shape()
            reader.integer()
            for _ in range(4):
                reader.floating()
            if name == "fc_3":
                reader.boolean()
            layers.append(("fc", params[: int(np.prod(weight_shape))].reshape(weight_shape[:2])))
        else:
            raise DlibFormatError(f"a layer this reader does not know: {name}")


def _folded(convolution: Convolution, affine: tuple[np.ndarray, np.ndarray]) -> Convolution:
    gamma, beta = affine
    return Convolution(convolution.weights * gamma[:, None, None, None], convolution.bias * gamma + beta,
                       convolution.stride, convolution.padding)


def read_dlib_resnet(path: str | Path) -> DlibResNet:
    """Parse dlib's face network file into folded convolutions; refuses any other layout."""
    try:
        means, layers = _read_layers(Path(path).read_bytes())
    except DlibFormatError:
        raise
    except (IndexError, ValueError) as error:  # UnicodeDecodeError is a ValueError
        raise DlibFormatError(f"{Path(path).name} ends early or is damaged ({error})") from None
    if not layers:
        raise DlibFormatError(f"{Path(path).name} holds no layers")
    kinds = [kind for kind, _ in layers]
    expected_stem = ["con", "affine", "relu", "max_pool"]
    if kinds[:4] != expected_stem or kinds[-2:] != ["avg_pool", "fc"]:
        raise DlibFormatError("not the layout of dlib_face_recognition_resnet_model_v1")
    stem = _folded(layers[0][1], layers[1][1])
    # (pixel - mean) / 256 into the stem: exact because the stem convolution takes no padding.
    stem = Convolution(stem.weights / 256.0,
                       stem.bias - (stem.weights * means[None, :, None, None]).sum(axis=(1, 2, 3)) / 256.0,
                       stem.stride, stem.padding)
    network = DlibResNet(means, stem)
    body = layers[4:-2]
    at = 0
    while at < len(body):
        downsample = body[at + 5][0] == "avg_pool"
        span = 8 if downsample else 7
        shape = [kind for kind, _ in body[at : at + span]]
        expected = ["con", "affine", "relu", "con", "affine"] + (["avg_pool"] if downsample else []) + ["add_prev", "relu"]
        if shape != expected:
            raise DlibFormatError(f"unexpected residual block: {shape}")
        network.blocks.append(ResidualBlock(_folded(body[at][1], body[at + 1][1]),
                                            _folded(body[at + 3][1], body[at + 4][1]), downsample))
        at += span
    network.projection = layers[-1][1].astype(np.float64)
    return network


def to_onnx(network: DlibResNet):
    """The network as an ONNX model: input `images` float32 [N, 3, 150, 150] RGB 0..255, output `descriptor`
    float32 [N, 128], dlib's raw descriptor (not normalised)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, weights = [], []
    names = iter(range(1_000_000))

    def constant(values: np.ndarray, dtype=np.float32) -> str:
        name = f"w{next(names)}"
        weights.append(numpy_helper.from_array(np.asarray(values, dtype), name))
        return name

    def node(op: str, inputs: list[str], **attributes) -> str:
        output = f"{op.lower()}{next(names)}"
        nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def convolve(x: str, size: list[int], conv: Convolution) -> tuple[str, list[int]]:
        k = conv.weights.shape[2]
        out = node("Conv", [x, constant(conv.weights), constant(conv.bias)], kernel_shape=[k, k],
                   strides=[conv.stride] * 2, pads=[conv.padding] * 4)
        side = (size[1] + 2 * conv.padding - k) // conv.stride + 1
        return out, [conv.weights.shape[0], side, side]

    def padded(x: str, size: list[int], target: list[int]) -> str:
        """dlib's add_prev: the smaller tensor zero-filled to the larger one's channels and sides."""
        if size == target:
            return x
        pads = [0, 0, 0, 0, 0, target[0] - size[0], target[1] - size[1], target[2] - size[2]]
        return node("Pad", [x, constant(np.array(pads, np.int64), np.int64)], mode="constant")

    x, size = convolve("images", [3, CHIP_SIZE, CHIP_SIZE], network.stem)
    x = node("Relu", [x])
    x = node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2])
    size = [size[0], (size[1] - 3) // 2 + 1, (size[2] - 3) // 2 + 1]
    for block in network.blocks:
        y, y_size = convolve(x, size, block.first)
        y = node("Relu", [y])
        y, y_size = convolve(y, y_size, block.second)
        shortcut, shortcut_size = x, size
        if block.downsample:
            shortcut = node("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
            shortcut_size = [size[0], (size[1] - 2) // 2 + 1, (size[2] - 2) // 2 + 1]
        target = [max(a, b) for a, b in zip(y_size, shortcut_size)]
        x = node("Relu", [node("Add", [padded(y, y_size, target), padded(shortcut, shortcut_size, target)])])
        size = target
    x = node("Flatten", [node("GlobalAveragePool", [x])], axis=1)
    nodes.append(helper.make_node("MatMul", [x, constant(network.projection)], ["descriptor"]))
    graph = helper.make_graph(
        nodes, "dlib_face_recognition_resnet_model_v1",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["N", 3, CHIP_SIZE, CHIP_SIZE])],
        [helper.make_tensor_value_info("descriptor", TensorProto.FLOAT, ["N", DESCRIPTOR_SIZE])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="facerec")
    model.ir_version = 8
    return model


def convert(network_file: str | Path, onnx_file: str | Path) -> Path:
    """dlib's network file written as the ONNX graph of `to_onnx` at `onnx_file` (needs the `onnx` package)."""
    import onnx

    onnx.save(to_onnx(read_dlib_resnet(network_file)), onnx_file)
    return Path(onnx_file)
