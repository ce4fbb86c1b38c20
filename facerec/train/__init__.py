"""Training of facerec's embedder (needs the `train` extra: torch, onnx and the dlib teacher).

Nothing in the runtime imports this package. It reuses the runtime's alignment (`facerec.faces.align`, through the
aligned-face cache) and metrics (`facerec.metrics`), so training sees the crops and scores the runtime uses.
"""

try:
    import torch  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the install
    raise ImportError("training needs the 'train' extra: pip install 'facerec[train]'") from error
