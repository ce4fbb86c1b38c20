"""Export a trained embedder to ONNX and check it against torch on real aligned faces.

The ONNX graph takes float32 RGB [N, 3, 112, 112] in 0..255 (dynamic batch) and returns unit-length float32
[N, 512] embeddings; normalisation of the input and of the output is inside the graph, so the runtime only
stacks aligned crops.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch

from facerec.train.backbone import FaceEmbedder, NormalizedEmbedder


def load_embedder(weights: str | Path) -> FaceEmbedder:
    """A FaceEmbedder in eval mode from a `embedder.pt` / `best.pt` file (fp16 weights are widened)."""
    state = torch.load(weights, map_location="cpu", weights_only=False)
    model = FaceEmbedder(state["config"]["stem"])
    model.load_state_dict({k: (v.float() if v.is_floating_point() else v) for k, v in state["model"].items()})
    return model.eval()


def export_onnx(model: FaceEmbedder, out_path: str | Path, opset: int = 17) -> str:
    """Write the ONNX file; returns its sha256."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    wrapped = NormalizedEmbedder(model).eval()
    example = torch.rand(2, 3, 112, 112) * 255
    torch.onnx.export(
        wrapped, (example,), str(out_path), input_names=["images"], output_names=["embeddings"],
        dynamic_axes={"images": {0: "batch"}, "embeddings": {0: "batch"}}, opset_version=opset, dynamo=False,
    )
    return hashlib.sha256(out_path.read_bytes()).hexdigest()


def max_difference(model: FaceEmbedder, onnx_path: str | Path, faces: np.ndarray) -> float:
    """Largest absolute difference between torch (fp32) and onnxruntime embeddings of uint8 [N,112,112,3] faces."""
    import onnxruntime as ort

    batch = torch.from_numpy(np.ascontiguousarray(faces)).permute(0, 3, 1, 2).float()
    with torch.no_grad():
        expected = NormalizedEmbedder(model).eval()(batch).numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    actual = session.run(None, {"images": batch.numpy()})[0]
    return float(np.abs(expected - actual).max())
