"""The faces path: a photo in, unit embeddings out.

image (decode, refuse bad input) -> detect (RetinaFace boxes and 5 landmarks) -> choice (which face) -> align
(similarity warp to the ArcFace template; training uses the same code) -> embed (the ONNX embedder, with its
self-check against the exact graph: embedder_check, reference_faces) -> pipeline (the four in a row, lazily
loaded). quality/ scores how likely a face is to be recognised later; drawing puts answers back on the photo.
Nothing here knows about galleries, people or thresholds.
"""
