"""Training tables: the GPU stages, the recipe diagnostic and ablations, data slope, training speed."""

from __future__ import annotations

import json
from pathlib import Path

from result_blocks.common import CARD, RESULTS, ROOT, cpu_text, load, model_text


def data_slope_block() -> str:
    """Half vs all of the training identities at the same compute (benchmarks/data_slope.py), held-out scores."""
    result = load("data_slope")
    if not result:
        return "(not measured yet: `python benchmarks/data_slope.py --out benchmarks/results/data_slope.json`)"
    rows = ["| run | training identities | epochs (same steps) | held-out one-shot rank-1 (30 draws) | "
            "TAR at FAR 1e-4 | ClosestIsPositiveAccuracy |", "|---|---|---|---|---|---|"]
    labels = {"start": ("the shipped weights (the start of both)", "–", "–")}
    for name, fraction in result["fractions"].items():
        labels[name] = (name, f"{fraction['identities']:.0%}", str(fraction["epochs"]))
    for name, (label, share, epochs) in labels.items():
        score = result["scores"][name]
        rows.append(f"| {label} | {share} | {epochs} | {score['one_shot_rank1']:.4f} | {score['tar_at_far_1e-4']:.4f} | "
                    f"{score['closest_is_positive_accuracy']:.4f} |")
    gap = result["half_minus_whole"]
    return ("\n".join(rows) + f"\n\nHalf minus all: one-shot rank-1 {100 * gap['one_shot_rank1']:+.2f} points, TAR at "
            f"FAR 1e-4 {100 * gap['tar_at_far_1e-4']:+.2f} points. Measured on: {cpu_text(result)}, warm start "
            f"{model_text(result)}.")


def utkface_block() -> str:
    """UTKFace as teacher-labelled faces: what was kept, and what decontamination dropped (scripts/data/utkface.py)."""
    result = load("utkface_decontamination")
    if not result:
        return "(not built yet: `python scripts/data/utkface.py MIRROR cache/utkface --mirror --results ...`)"
    near_lfw, near_celeba = result["within_distance_of_lfw_evaluation"], result["within_distance_of_celeba_held_out"]
    return (f"| photos | faces detected | dropped near an LFW evaluation photo | dropped near a held-out CelebA "
            f"identity | dropped | kept |\n|---|---|---|---|---|---|\n| {result['photos']:,} | {result['detected']:,} | "
            f"{result['dropped_near_lfw_evaluation']:,} | {result['dropped_near_celeba_held_out']:,} | "
            f"{result['dropped']:,} | **{result['kept']:,}** |\n\nSame-person distance "
            f"{result['same_person_distance']:.3f} (the teacher's one-to-many equivalent of dlib's "
            f"{result['dlib_tolerance']}: {result['false_hits_per_crop_allowed']} different people expected within it "
            f"among the {result['references']['lfw_evaluation_photos']:,} + "
            f"{result['references']['celeba_held_out_photos']:,} reference photos). At dlib's own "
            f"{result['dlib_tolerance']}, {near_lfw[str(result['dlib_tolerance'])]:,} of the crops would be 'near' an "
            f"LFW evaluation photo and {near_celeba[str(result['dlib_tolerance'])]:,} a held-out CelebA one. Source "
            f"{result['source']['repository']}@{result['source']['commit'][:8]}. Measured on: {cpu_text(result)}.")


def augmentation_ablation_block() -> str:
    """Stored augmentations' teacher targets vs fresh augmentations with the clean crop's target
    (benchmarks/augmentation_ablation.py), held-out scores at the same steps."""
    result = load("augmentation_ablation")
    if not result:
        return ("(not measured yet: `python benchmarks/augmentation_ablation.py --out "
                "benchmarks/results/augmentation_ablation.json`)")
    rows = ["| run | distillation target of an augmented crop | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | "
            "ClosestIsPositiveAccuracy |", "|---|---|---|---|---|"]
    labels = {"start": ("the shipped weights (the start of both)", "–"),
              "fresh": ("fresh", "the teacher's descriptor of the clean crop (or its mirror)"),
              "stored": ("stored", f"for {result['share']:.0%} of each batch: the teacher's descriptor of "
                                   + ("its stored augmentation" if result["augmentations"] == 1 else
                                      f"one of its {result['augmentations']} stored augmentations")
                                   + ", those very pixels")}
    for name, (label, target) in labels.items():
        score = result["scores"][name]
        rows.append(f"| {label} | {target} | {score['one_shot_rank1']:.4f} | {score['tar_at_far_1e-4']:.4f} | "
                    f"{score['closest_is_positive_accuracy']:.4f} |")
    gap, shift = result["stored_minus_fresh"], result["target_shift"]
    return ("\n".join(rows) + f"\n\nStored minus fresh: one-shot rank-1 {100 * gap['one_shot_rank1']:+.2f} points, TAR "
            f"at FAR 1e-4 {100 * gap['tar_at_far_1e-4']:+.2f} points, ClosestIsPositiveAccuracy "
            f"{100 * gap['closest_is_positive_accuracy']:+.2f} points ({result['identities']:,} celeba112 identities, "
            f"{result['epochs']} epochs, the same steps). How far an augmentation moves the teacher's descriptor: "
            f"cosine to the clean crop's {shift['mean']:.3f} on average (quartiles "
            f"{', '.join(f'{q:.3f}' for q in shift['quartiles'])}, {shift['augmentations']:,} augmentations). "
            f"Measured on: {cpu_text(result)}, warm start {model_text(result)}.")


def train_speed_block() -> str:
    """Training images per second by stem and precision on one CPU (benchmarks/train_speed.py)."""
    rows = ["| CPU | stem | fp32 img/s | bf16 img/s | the loop uses |", "|---|---|---|---|---|"]
    results = [json.loads(path.read_text()) for path in sorted(RESULTS.glob("train_speed*.json"))]
    for result in results:
        by_stem: dict[str, dict[str, float]] = {}
        for row in result["rows"]:
            by_stem.setdefault(row["stem"], {})[row["precision"]] = row["images_per_second"]
        for stem, speeds in by_stem.items():
            rows.append(f"| {cpu_text(result)} | {stem} | {speeds['fp32']:.0f} | {speeds['bf16']:.0f} | "
                        f"{'bf16' if result['native_bf16'] else 'fp32'} |")
    if not results:
        return "(not measured yet: `python benchmarks/train_speed.py --out benchmarks/results/train_speed_<cpu>.json`)"
    return "\n".join(rows) + (f"\n\nOne optimisation step of the embedder alone (batch {result['batch']}, every core, "
                               f"torch {result['torch']}).") + retrain_hours_text(results)


RETRAIN_STAGES = ("v4", "v5", "v6", "v7", "v8")  # the stages scripts/retrain.sh trains (from model v3)


def retrain_hours_text(speeds: list[dict]) -> str:
    """What scripts/retrain.sh's training costs on each CPU of `speeds` (the train_speed results) at the loop's
    precision (the network's steps alone), beside the training wall time it took on the CPU that made the shipped
    model (the card)."""
    training = json.loads(CARD.read_text())["training"]
    epochs = sum(stage["epochs"] for stage in training["lineage"] if stage["stage"] in RETRAIN_STAGES)
    images = training["data"]["training_images"]
    estimates = []
    for result in speeds:
        rate = next(row["images_per_second"] for row in result["rows"]
                    if row["stem"] == "high_res" and row["chosen_by_the_loop"])
        estimates.append(f"{epochs * images / rate / 3600:.1f} h on {cpu_text(result)}")
    measured = sum(training["wall_seconds"][f"train_{stage}"] for stage in RETRAIN_STAGES) / 3600
    return (f" The {epochs} epochs of {images:,} crops that scripts/retrain.sh trains (high-resolution stem) are, "
            f"at these rates, {'; '.join(estimates)} of network steps alone; on the CPU that made "
            f"the shipped model they took {measured:.1f} h, loading and the whole loop included "
            f"(`models/training/retrain_steps.json`).")


def standard_stem_block() -> str:
    """The standard-stem candidate against the shipped model on the held-out selection identities, one run
    (benchmarks/embedding_options.py --other shipped=...: benchmarks/results/standard_stem_candidate.json)."""
    result = load("standard_stem_candidate")
    if not result:
        return ("(not measured yet: `python benchmarks/embedding_options.py --model runs/v9r/model_fp32.onnx --int8 "
                "--other shipped=models/facerec-r18-arcface.onnx --out benchmarks/results/standard_stem_candidate.json`)")
    names = {"shipped": "shipped model v8 (high-resolution stem, int8)", "fp32": "standard-stem candidate, fp32",
             "int8": "standard-stem candidate, int8 (7-bit weights)"}
    rows = ["| model (test-time flip) | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | "
            "ClosestIsPositiveAccuracy | ms per face, 1 thread |", "|---|---|---|---|---|"]
    for option in result["options"]:
        if option["flip_tta"] and option["name"] in names:
            rows.append(f"| {names[option['name']]} | {option['one_shot_rank1']:.4f} | {option['tar_at_far_1e-4']:.4f} | "
                        f"{option['closest_is_positive_accuracy']:.4f} | {option['ms_per_face_1_thread']:.1f} |")
    text = "\n".join(rows) + f"\n\nMeasured in one run on: {cpu_text(result)}."
    counted, shipped = load("instruction_count_standard_stem"), load("instruction_count")
    if counted and shipped:
        text += (f" On an AVX2 CPU without VNNI, by valgrind's instruction count (an estimate, not a timing; "
                 f"`benchmarks/instruction_count.py --model ...`): dlib needs "
                 f"{counted['ratio_face_recognition_over_facerec']:.1f}x the candidate's instructions per face, "
                 f"{shipped['ratio_face_recognition_over_facerec']:.1f}x the shipped model's.")
    return text


def enrollment_views_block() -> str:
    """Enrollment templates averaged over moved views of the enrolled crop against today's single view, on the
    held-out selection identities (benchmarks/enrollment_views.py)."""
    result = load("enrollment_views")
    if not result:
        return ("(not measured yet: `python benchmarks/enrollment_views.py --out "
                "benchmarks/results/enrollment_views.json`)")
    rows = ["| enrollment template | views (each with its mirror) | held-out one-shot rank-1 (30 draws) | "
            "TAR at FAR 1e-4 | TAR at FAR 1e-3 |", "|---|---|---|---|---|"]
    for row in result["rows"]:
        rows.append(f"| {row['template']} | {len(row['views'])} | {row['one_shot_rank1']:.4f} | "
                    f"{row['tar_at_far_1e-04']:.4f} | {row['tar_at_far_1e-03']:.4f} |")
    gain = result["best_minus_today"]
    return ("\n".join(rows) + f"\n\nBest ({result['best']}) minus today: one-shot rank-1 "
            f"{100 * gain['one_shot_rank1']:+.2f} points, TAR at FAR 1e-4 {100 * gain['tar_at_far_1e-04']:+.2f} "
            f"points ({result['held_out_identities']} identities, {result['photos']:,} photos). Measured on: "
            f"{cpu_text(result)}, model {model_text(result)}.")


def gpu_stage_block() -> str:
    """Model v9's arms (one GPU run, scripts/device_training.py) beside the model they started from, measured the same
    way on the held-out selection identities (benchmarks/stage_average.py; the start's row from the recipe
    diagnostic's measurement of that model)."""
    path = ROOT / "models" / "training" / "stage_average.json"
    if not path.exists():
        return "(not measured yet: `python benchmarks/stage_average.py --stage ... --out models/training/stage_average.json`)"
    result = json.loads(path.read_text())
    start = load("recipe_diagnostic").get("scores", {}).get("start")
    rows = ["| candidate | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | ClosestIsPositiveAccuracy |",
            "|---|---|---|---|"]
    if start:
        rows.append(f"| model v8, the start of both arms | {start['one_shot_rank1']:.4f} | "
                    f"{start['tar_at_far_1e-4']:.4f} | {start['closest_is_positive_accuracy']:.4f} |")
    chosen = result["chosen"]["name"]
    for candidate in result["candidates"]:
        name = candidate["name"] + (" (chosen)" if candidate["name"] == chosen else "")
        rows.append(f"| {name} | {candidate['one_shot_rank1']:.4f} | {candidate['tar_at_far_1e-4']:.4f} | "
                    f"{candidate['closest_is_positive_accuracy']:.4f} |")
    shipped = load("embedding_options").get("chosen")
    if shipped:
        rows.append(f"| shipped: the chosen weights as `{Path(shipped['model']).name}` | "
                    f"{shipped['one_shot_rank1']:.4f} | {shipped['tar_at_far_1e-4']:.4f} | "
                    f"{shipped['closest_is_positive_accuracy']:.4f} |")
    return ("\n".join(rows) + f"\n\n150 held-out identities, {result['photos']:,} photos, test-time flip. Rule: "
            f"{result['rule']}. Measured on: {cpu_text(result)}; the shipped row on {cpu_text(load('embedding_options'))}, "
            f"model {model_text(load('embedding_options'))}.")


def gpu_stage_v10_block() -> str:
    """The second GPU stage (two arms from v9 as it shipped), measured as v9's were; v9 stays when no candidate
    beats it by more than the draws differ."""
    result = load("gpu_stage_v10")
    if not result:
        return "(not measured yet: `python benchmarks/stage_average.py --stage v9=... --stage ... --out benchmarks/results/gpu_stage_v10.json`)"
    run = result["run"]
    rows = ["| candidate | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | ClosestIsPositiveAccuracy |",
            "|---|---|---|---|"]
    for candidate in result["candidates"]:
        rows.append(f"| {candidate['name']} | {candidate['one_shot_rank1']:.4f} | {candidate['tar_at_far_1e-4']:.4f} | "
                    f"{candidate['closest_is_positive_accuracy']:.4f} |")
    best, v9 = result["chosen"], result["candidates"][0]
    return ("\n".join(rows) + f"\n\nEach arm {run['epochs']} epochs of {run['train_rows']:,} crops from "
            f"{run['start']}, {run['probe_images_per_second']:,} images/s for one arm alone; 150 held-out identities, "
            f"{result['photos']:,} photos, test-time flip. Best candidate {best['name']}: "
            f"{100 * (best['one_shot_rank1'] - v9['one_shot_rank1']):+.2f} points of rank-1 and "
            f"{100 * (best['tar_at_far_1e-4'] - v9['tar_at_far_1e-4']):+.2f} of TAR over v9. Measured on: "
            f"{cpu_text(result)}.")


def recipe_diagnostic_block() -> str:
    """Model v8's stage recipe and its variants at the same steps, scored on held-out identities
    (benchmarks/recipe_diagnostic.py)."""
    result = load("recipe_diagnostic")
    if not result:
        return "(not measured yet: `python benchmarks/recipe_diagnostic.py --arms structure no_structure --out ...`)"
    rows = ["| arm | arguments beyond v8's terms | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | "
            "ClosestIsPositiveAccuracy | TAR minus the control |", "|---|---|---|---|---|---|"]
    control = result["scores"].get(result["control"], {})
    for name, score in result["scores"].items():
        arguments = "the start of every arm" if name == "start" else " ".join(score.get("arguments", [])) or "–"
        gap = (f"{100 * (score['tar_at_far_1e-4'] - control['tar_at_far_1e-4']):+.1f} points"
               if control and name not in ("start", result["control"]) else "–")
        rows.append(f"| {name} | `{arguments}` | {score['one_shot_rank1']:.4f} | {score['tar_at_far_1e-4']:.4f} | "
                    f"{score['closest_is_positive_accuracy']:.4f} | {gap} |")
    settings = result["settings"]
    return ("\n".join(rows) + f"\n\nEvery arm: `{' '.join(settings['common'])}`, {settings['epochs']} epochs on "
            f"{settings['identities']:,} celeba112 training identities, from the shipped weights; the control is "
            f"`{result['control']}`. Measured on: {cpu_text(result)}, warm start {model_text(result)}.")


def asymmetric_flip_block() -> str:
    """Flip at enrollment only against flip on both sides, held-out identities (benchmarks/asymmetric_flip.py)."""
    result = load("asymmetric_flip")
    if not result:
        return ("(not measured yet: `python benchmarks/asymmetric_flip.py --out "
                "benchmarks/results/asymmetric_flip.json`)")
    rows = ["| option | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | ms per query face, 1 thread |",
            "|---|---|---|---|"]
    for label, key, speed in (("flip on both sides (shipped)", "both_flipped", "query_ms_flip"),
                              ("flip at enrollment only", "flip_at_enrollment_only", "query_ms_once")):
        rows.append(f"| {label} | {result[key]['rank1']:.4f} | {result[key]['tar_at_far_1e-4']:.4f} | "
                    f"{result['speed'][speed]:.1f} |")
    cost, budget = result["cost"], result["budget"]
    verdict = "within" if result["within_budget"] else "over"
    return ("\n".join(rows) + f"\n\nCost: {100 * cost['rank1']:.2f} points of rank-1 and "
            f"{100 * cost['tar_at_far_1e-4']:.2f} of TAR at FAR 1e-4, {verdict} the budget of "
            f"{100 * budget['rank1']:.1f} and {100 * budget['tar_at_far_1e-4']:.1f} points. {result['identities']} "
            f"held-out identities, {result['photos']:,} photos. Measured on: {cpu_text(result)}, model "
            f"{model_text(result)}.")
