"""The fused pack's join: facerec's 512-d embedding and dlib's 128-d descriptor as one 512-d unit vector.

    joined = [sqrt(1 - w) * unit(P @ u), sqrt(w) * unit(d)]

u is facerec's unit embedding, P its first 384 principal directions (`facerec.packs.projection`), d dlib's
descriptor (crop and mirror summed), w dlib's weight. Two joined faces' dot product is (1 - w) cos_facerec +
w cos_dlib: the gallery, its index and the score cohort work on it unchanged. w is large (about 0.95) because dlib's
raw cosines spread about a quarter as wide as facerec's; `benchmarks/fused_embedding.py` chose it on held-out
identities. The join is an ONNX file (`models/facerec-dlib-fused.onnx`) so that the fused pack, like the others,
is named, hashed and calibrated through its own file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

FACEREC_INPUT, DLIB_INPUT, OUTPUT = "facerec", "dlib", "embedding"


def join_model(directions: np.ndarray, dlib_weight: float):
    """The join as an ONNX model (needs the `onnx` package): inputs `facerec` [N, 512] and `dlib` [N, 128]
    float32, output `embedding` [N, 384 + 128] float32 of unit length."""
    from onnx import TensorProto, helper, numpy_helper

    if not 0.0 <= dlib_weight <= 1.0:
        raise ValueError(f"dlib's weight is a share between 0 and 1, not {dlib_weight}")
    directions = np.asarray(directions, np.float32)
    kept, width = directions.shape
    weights = [numpy_helper.from_array(directions.T.copy(), "directions"),
               numpy_helper.from_array(np.array([np.sqrt(1.0 - dlib_weight)], np.float32), "facerec_share"),
               numpy_helper.from_array(np.array([np.sqrt(dlib_weight)], np.float32), "dlib_share")]
    nodes = [
        helper.make_node("MatMul", [FACEREC_INPUT, "directions"], ["projected"]),
        helper.make_node("LpNormalization", ["projected"], ["projected_unit"], axis=1, p=2),
        helper.make_node("Mul", ["projected_unit", "facerec_share"], ["facerec_part"]),
        helper.make_node("LpNormalization", [DLIB_INPUT], ["dlib_unit"], axis=1, p=2),
        helper.make_node("Mul", ["dlib_unit", "dlib_share"], ["dlib_part"]),
        helper.make_node("Concat", ["facerec_part", "dlib_part"], [OUTPUT], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "facerec_dlib_join",
        [helper.make_tensor_value_info(FACEREC_INPUT, TensorProto.FLOAT, ["N", width]),
         helper.make_tensor_value_info(DLIB_INPUT, TensorProto.FLOAT, ["N", 128])],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["N", kept + 128])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="facerec")
    model.ir_version = 8
    model.doc_string = f"dlib_weight={dlib_weight}"
    return model


def write_join(directions: np.ndarray, dlib_weight: float, path: str | Path) -> Path:
    """Save the join of `join_model` at `path`."""
    import onnx

    onnx.save(join_model(directions, dlib_weight), path)
    return Path(path)
