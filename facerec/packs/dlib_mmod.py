"""dlib's MMOD CNN face detector (`mmod_human_face_detector.dat`, public domain) read from dlib's own file and
written as an ONNX graph, with dlib's image pyramid and decoding reproduced, so onnxruntime runs it instead of
dlib's CPU convolutions (about a tenth of their time: docs/results.md).

The file (dlib's `serialize()` of the network of `dnn_mmod_face_detection_ex.cpp`) holds the loss layer's options
(one 80x80 detector window, the non-maximum suppression's overlap thresholds), the input layer (an RGB image
pyramid: channel means, the padding between and around the tiled levels) and seven convolutions from the input
to the output: three 5x5 of stride 2 without padding (16, 32, 32 filters), three 5x5 of stride 1 (45 filters),
each followed by a batch norm (stored as `bn_con2`, folded here as dlib itself turns it into `affine`) and a relu,
then one 9x9 of one filter: the score map.

How dlib detects, reproduced step by step (`detect`): the photo's levels, each 5/6 of the one before
(`pyramid_down<6>`, down to 5 rows), are tiled into one image (`tiled_pyramid`, dlib's
`compute_tiled_image_pyramid_details`), level 0 as `(pixel - mean) / 256` and each next level a bilinear resize
of the one before it with aligned corners (dlib's `resize_bilinear`), zero elsewhere; the network scores the tiled
image in one run; every score above 0 is a detection of the 80x80 window centred at 8 x + 14 (the convolutions'
stride and kernels walked back to the input), mapped from its tile back to the photo (`rect_up`: x 6/5 + 0.3 per
level); the detections, best first, are kept unless they overlap one kept before (dlib's `test_box_overlap` with
the file's thresholds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from facerec.packs.dlib_resnet import Convolution, DlibFormatError, _folded, _Reader

MIN_LEVEL_ROWS = 5  # dlib's compute_tiled_image_pyramid_details stops below this
PYRAMID_RATE = 5 / 6  # pyramid_down<6>
STRIDE, OFFSET = 8, 14  # an output cell x is the input's 8 x + 14 (three stride-2 5x5 convolutions, unpadded)


@dataclass
class MmodDetector:
    """The parsed detector: what the graph and the decoding need."""

    means: np.ndarray  # RGB
    padding: int  # between tiled levels
    outer_padding: int  # around them
    window: tuple[int, int]  # width, height of the detector window
    nms: tuple[float, float]  # (iou, percent covered) over which a detection overlaps one kept before
    convolutions: list[Convolution] = field(default_factory=list)


def _read_options(reader: _Reader) -> tuple[tuple[int, int], tuple[float, float]]:
    """The loss layer's options: the (only) detector window and the non-maximum suppression's thresholds."""
    version = reader.integer()
    if version == 1:
        window = (reader.integer(), reader.integer())
    else:
        windows = [(reader.integer(), reader.integer(), reader.integer(), reader.string())
                   for _ in range(reader.integer())]
        if len(windows) != 1:
            raise DlibFormatError("a detector with several windows: not dlib's face detector")
        window = windows[0][1:3]
    for _ in range(3):
        reader.floating()  # loss per false alarm, per missed target, truth-match IoU
    return window, (reader.floating(), reader.floating())


def read_dlib_mmod(path: str | Path) -> MmodDetector:
    """Parse dlib's MMOD face detector file; refuses any other layout (DlibFormatError, one line)."""
    data = Path(path).read_bytes()
    try:
        reader = _Reader(data)
        reader.integer()  # the loss layer wrapper's version
        if reader.string() != "loss_mmod_":
            raise DlibFormatError("not a dlib MMOD detector (no loss_mmod_ layer)")
        window, nms = _read_options(reader)
        marker = b"input_rgb_image_pyramid"
        if marker not in data:
            raise DlibFormatError("no input_rgb_image_pyramid layer: not dlib's face detector")
        reader.at = data.index(marker) - 2
        version = reader.string()
        means = np.array([reader.floating() for _ in range(3)], np.float64)
        # the first version kept no paddings: dlib's defaults, 10 between levels and 11 around them
        padding, outer = (reader.integer(), reader.integer()) if version.endswith("2") else (10, 11)
        detector = MmodDetector(means, padding, outer, window, nms)
        pending: Convolution | None = None
        while True:
            reader.skip_training_state()
            if reader.at >= len(data):
                break
            name = reader.string()
            if name == "con_4" or name.startswith("con_"):
                params = reader.tensor().reshape(-1)
                _filters, _rows, _cols = reader.integer(), reader.integer(), reader.integer()
                stride, _stride_x, pad, _pad_x = (reader.integer() for _ in range(4))
                weight_shape, bias_shape = reader.alias_shape(), reader.alias_shape()
                for _ in range(4):
                    reader.floating()
                if name in ("con_5", "con_6"):
                    reader.boolean()
                if name == "con_6":
                    reader.boolean()
                size = int(np.prod(weight_shape))
                if pending is not None:
                    detector.convolutions.append(pending)
                pending = Convolution(params[:size].reshape(weight_shape).astype(np.float64),
                                      params[size:size + int(np.prod(bias_shape))].astype(np.float64), stride, pad)
            elif name == "bn_con2":
                params = reader.tensor().reshape(-1)
                count = int(np.prod(reader.alias_shape()))
                reader.alias_shape()
                reader.tensor(), reader.tensor()  # the last batch's means and inverse deviations (training)
                running_means = reader.tensor().reshape(-1).astype(np.float64)
                running_variances = reader.tensor().reshape(-1).astype(np.float64)
                reader.integer(), reader.integer()  # updates seen, the running statistics' window
                for _ in range(4):
                    reader.floating()  # learning-rate and weight-decay multipliers
                eps = reader.floating()
                gamma = params[:count] / np.sqrt(running_variances + eps)
                beta = params[count:2 * count] - gamma * running_means
                pending = _folded(pending, (gamma.astype(np.float64), beta.astype(np.float64)))
            elif name.startswith("relu_"):
                continue
            else:
                raise DlibFormatError(f"a layer this reader does not know: {name}")
        if pending is not None:
            detector.convolutions.append(pending)
    except (IndexError, ValueError) as error:
        if isinstance(error, DlibFormatError):
            raise
        raise DlibFormatError(f"{Path(path).name} is damaged or not dlib's face detector ({error})") from None
    if len(detector.convolutions) != 7 or detector.convolutions[-1].weights.shape[0] != 1:
        raise DlibFormatError("not the layout of dlib's face detector (seven convolutions, one score map)")
    return detector


# ----- the graph ------------------------------------------------------------------------------------------------
def to_onnx(detector: MmodDetector):
    """The network as an ONNX model: input `pyramid` float32 [1, 3, H, W] (the tiled pyramid, `tiled_tensor`),
    output `scores` [1, 1, h, w] (needs the `onnx` package)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, weights = [], []
    x = "pyramid"
    for number, conv in enumerate(detector.convolutions):
        w, b = f"w{number}", f"b{number}"
        weights += [numpy_helper.from_array(conv.weights.astype(np.float32), w),
                    numpy_helper.from_array(conv.bias.astype(np.float32), b)]
        k = conv.weights.shape[2]
        last = number == len(detector.convolutions) - 1
        out = "scores" if last else f"conv{number}"
        nodes.append(helper.make_node("Conv", [x, w, b], [out], kernel_shape=[k, k], strides=[conv.stride] * 2,
                                      pads=[conv.padding] * 4))
        if not last:
            nodes.append(helper.make_node("Relu", [out], [f"relu{number}"]))
            x = f"relu{number}"
    graph = helper.make_graph(nodes, "dlib_mmod_human_face_detector",
                              [helper.make_tensor_value_info("pyramid", TensorProto.FLOAT, [1, 3, "H", "W"])],
                              [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, "h", "w"])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="facerec")
    model.ir_version = 8
    for key, value in (("means", detector.means), ("padding", [detector.padding, detector.outer_padding]),
                       ("window", list(detector.window)), ("nms", list(detector.nms))):
        model.metadata_props.append(_prop(key, value))
    return model


def _prop(key: str, value) -> object:
    from onnx import StringStringEntryProto

    return StringStringEntryProto(key=key, value=",".join(repr(float(v)) for v in np.ravel(value)))


def convert(detector_file: str | Path, onnx_file: str | Path) -> Path:
    """dlib's detector file written as the ONNX graph of `to_onnx` (its decoding settings in the metadata)."""
    import onnx

    onnx.save(to_onnx(read_dlib_mmod(detector_file)), onnx_file)
    return Path(onnx_file)


# ----- the pyramid and the decoding --------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """What decoding needs (from the ONNX file's metadata)."""

    means: np.ndarray
    padding: int
    outer_padding: int
    window: tuple[int, int]
    nms: tuple[float, float]

    @classmethod
    def of(cls, metadata: dict[str, str]) -> "Settings":
        number = {key: [float(v) for v in text.split(",")] for key, text in metadata.items()}
        try:
            return cls(np.array(number["means"]), int(number["padding"][0]), int(number["padding"][1]),
                       (int(number["window"][0]), int(number["window"][1])), tuple(number["nms"][:2]))
        except (KeyError, IndexError, ValueError):
            raise DlibFormatError("the detector's ONNX file lacks its decoding settings") from None


def tiled_pyramid(rows: int, cols: int, padding: int, outer: int) -> tuple[list[tuple[int, int, int, int]], int, int]:
    """(each level's (left, top, right, bottom), inclusive, in the tiled image; its rows; its columns): dlib's
    `compute_tiled_image_pyramid_details` for `pyramid_down<6>`."""
    sizes = [(cols, rows)]
    nr, nc = rows, cols
    while True:
        nr, nc = math.floor(PYRAMID_RATE * nr), math.floor(PYRAMID_RATE * nc)
        if nr * nc == 0 or nr < MIN_LEVEL_ROWS:
            break
        sizes.append((nc, nr))
    total_height = sum(h + padding for _w, h in sizes) - 2 * padding
    height, previous_width = 0, 0
    for width, level_height in sizes:
        if width <= cols - previous_width - padding and (height - rows) * 2 >= total_height - rows:
            break
        height += level_height + padding
        previous_width = width
    height -= padding
    rects: list[tuple[int, int, int, int]] = []
    y = outer
    while y < height + outer and len(rects) < len(sizes):
        width, level_height = sizes[len(rects)]
        rects.append((outer, y, outer + width - 1, y + level_height - 1))
        y += level_height + padding
    y -= padding
    first = rects[0]
    while len(rects) < len(sizes):
        width, level_height = sizes[len(rects)]
        right, bottom = outer + cols - 1, y - 1
        rect = (right - (width - 1), bottom - (level_height - 1), right, bottom)
        if not (rect[2] < first[0] or rect[0] > first[2] or rect[3] < first[1] or rect[1] > first[3]):
            break
        rects.append(rect)
        y -= level_height + padding
    return rects, height + 2 * outer, cols + 2 * outer


def _resized(source: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """dlib's `resize_image` (bilinear, corners aligned) of a [C, H, W] float32 array."""
    in_rows, in_cols = source.shape[1:]
    y = np.arange(rows) * ((in_rows - 1) / max(rows - 1, 1))
    x = np.arange(cols) * ((in_cols - 1) / max(cols - 1, 1))
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    y1, x1 = np.minimum(y0 + 1, in_rows - 1), np.minimum(x0 + 1, in_cols - 1)
    fy, fx = (y - y0)[:, None], (x - x0)[None, :]
    top = source[:, y0][:, :, x0] * (1 - fx) + source[:, y0][:, :, x1] * fx
    bottom = source[:, y1][:, :, x0] * (1 - fx) + source[:, y1][:, :, x1] * fx
    return (top * (1 - fy) + bottom * fy).astype(np.float32)


def tiled_tensor(image: np.ndarray, settings: Settings) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """The network's input for an RGB uint8 [H, W, 3] image: [1, 3, NR, NC] float32, and the levels' rects."""
    rows, cols = image.shape[:2]
    rects, total_rows, total_cols = tiled_pyramid(rows, cols, settings.padding, settings.outer_padding)
    tensor = np.zeros((3, total_rows, total_cols), np.float32)
    level = ((image.astype(np.float32) - settings.means.astype(np.float32)) / 256.0).transpose(2, 0, 1)
    left, top, right, bottom = rects[0]
    tensor[:, top:bottom + 1, left:right + 1] = level
    for previous, rect in zip(rects, rects[1:]):
        pl, pt, pr, pb = previous
        left, top, right, bottom = rect
        tensor[:, top:bottom + 1, left:right + 1] = _resized(tensor[:, pt:pb + 1, pl:pr + 1], bottom - top + 1,
                                                             right - left + 1)
    return tensor[None], rects


def _nearest(rects: list[tuple[int, int, int, int]], x: float, y: float) -> int:
    """dlib's `nearest_rect`: the level containing the (rounded) point, else the nearest one."""
    px, py = round(x), round(y)
    best, distance = 0, math.inf
    for index, (left, top, right, bottom) in enumerate(rects):
        if left <= px <= right and top <= py <= bottom:
            return index
        nx, ny = min(max(px, left), right), min(max(py, top), bottom)
        gap = math.hypot(nx - px, ny - py)
        if gap < distance:
            best, distance = index, gap
    return best


def _lround(value: float) -> int:
    """C's lround: halves away from zero (dlib's drectangle to rectangle)."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def _up(value: float, levels: int) -> float:
    for _ in range(levels):
        value = value * (6 / 5.0) + 0.3  # pyramid_down<6>::point_up, its own order of operations
    return value


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int], iou: float, covered: float) -> bool:
    """dlib's `test_box_overlap` on whole-pixel rectangles (areas count pixels, the union is the bounding box)."""
    inner_w = min(a[2], b[2]) - max(a[0], b[0]) + 1
    inner_h = min(a[3], b[3]) - max(a[1], b[1]) + 1
    if inner_w <= 0 or inner_h <= 0:
        return False
    inner = inner_w * inner_h
    outer = (max(a[2], b[2]) - min(a[0], b[0]) + 1) * (max(a[3], b[3]) - min(a[1], b[1]) + 1)
    area = lambda r: (r[2] - r[0] + 1) * (r[3] - r[1] + 1)  # noqa: E731
    return inner / outer > iou or inner / area(a) > covered or inner / area(b) > covered


def detections(scores: np.ndarray, rects: list[tuple[int, int, int, int]],
               settings: Settings) -> list[tuple[tuple[int, int, int, int], float]]:
    """((left, top, right, bottom) whole pixels in the photo, confidence) of each face, best first: dlib's
    `tensor_to_dets` at threshold 0, then its non-maximum suppression."""
    grid = scores[0, 0]
    found = []
    width, height = settings.window
    for row, col in zip(*np.nonzero(grid > 0)):
        cx, cy = STRIDE * col + OFFSET, STRIDE * row + OFFSET
        left, top = cx - (width - 1) / 2, cy - (height - 1) / 2
        right, bottom = cx + (width - 1) / 2, cy + (height - 1) / 2
        level = _nearest(rects, (left + right) / 2, (top + bottom) / 2)
        ox, oy = rects[level][0], rects[level][1]
        box = (_up(left - ox, level), _up(top - oy, level), _up(right - ox, level), _up(bottom - oy, level))
        found.append((tuple(_lround(v) for v in box), float(grid[row, col])))
    found.sort(key=lambda item: -item[1])
    kept: list[tuple[tuple[int, int, int, int], float]] = []
    for box, score in found:
        if not any(_overlaps(other, box, *settings.nms) for other, _score in kept):
            kept.append((box, score))
    return kept
