"""`facerec-train ...`: how the shipped model is made (the `train` extra): align a dataset into a cache, teacher
descriptors, training, ONNX export, weight averaging, quantization and the threshold calibration of a model card.

Apart from `facerec` so that the app's command line holds what a gallery's user needs and nothing of the
research; same conventions (`--json`, one-line errors, exit codes) through the same shell.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from facerec.cli.output import emit, progress_bar, settings_from
from facerec.cli.registry import CommandAdder, run_parser
from facerec.errors import FaceRecError
from facerec.words.phrasing import rate_text


def main(argv: list[str] | None = None) -> int:
    return run_parser(build_parser(), argv)


def build_parser() -> argparse.ArgumentParser:
    from facerec.cli.registry import new_parser

    parser, command, sub, common = new_parser("facerec-train", "Make facerec's embedder: data, training, export, "
                                                                "averaging, quantization, calibration.")
    register(command, sub, common)
    return parser


def register(command: CommandAdder, sub, common: argparse.ArgumentParser) -> None:
    """The model-making commands."""
    p = command("prepare", cmd_prepare, "detect and align a folder-per-identity dataset into a cache")
    p.add_argument("data_dir")
    p.add_argument("out")
    p = command("train", cmd_train, "train the embedder (needs the 'train' extra)")
    p.add_argument("--celeba", default="../shared/data/celeba112")
    p.add_argument("--lfw-cache", help="output of `facerec-train prepare ../shared/data/lfw DIR` (its training "
                                        "people join; without it, celeba112 alone)")
    p.add_argument("--teacher", nargs="*", default=[],
                   help="teacher files (celeba112_dlib.npz, `facerec-train teacher-targets` output) for distillation")
    p.add_argument("--unlabelled", nargs=2, action="append", default=[], metavar=("CACHE", "TEACHER"),
                   help="faces without identities, taught by the teacher alone: an aligned-face cache and the "
                        "teacher file of its decontaminated crops (e.g. cache/utkface/cache "
                        "cache/utkface/utkface_teacher.npz); repeatable")
    p.add_argument("--augmented-teacher", nargs="+", default=[], metavar="FILE",
                   help="teacher files of stored augmentations (`facerec-train teacher-targets ... "
                        "--augmentations K`): a share of each batch is shown them, with their own targets")
    p.add_argument("--augmented-share", type=float, default=0.5,
                   help="share of a batch's crops shown a stored augmentation (with --augmented-teacher)")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--head", default="arcface", choices=["softmax", "contrastive", "triplet", "arcface"])
    p.add_argument("--stem", default="standard", choices=["standard", "high_res"])
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--warmup-epochs", type=float, default=1.0, help="linear learning-rate warm-up (epochs)")
    p.add_argument("--arcface-weight", type=float, default=1.0)
    p.add_argument("--distill-weight", type=float, default=0.0)
    p.add_argument("--structure-weight", type=float, default=0.0,
                   help="weight of matching the batch's cosine similarities to the teacher's")
    p.add_argument("--lookalike-share", type=float, default=0.0,
                   help="share of each batch made of look-alike identities, by the teacher (facerec.train.lookalikes)")
    p.add_argument("--tail-weight", type=float, default=0.0,
                   help="weight of the threshold-crossing term against a memory of embeddings (facerec.train.strict_threshold_loss)")
    p.add_argument("--ema-decay", type=float, default=0.0,
                   help="keep, validate and save a moving average of the weights with this decay (e.g. 0.999)")
    p.add_argument("--flip-invariant-targets", action="store_true",
                   help="the teacher target of a crop and its mirror: their normalised mean")
    p.add_argument("--warm-start", help="an ONNX embedder whose weights start the run")
    p.add_argument("--reference-model", help="an ONNX embedder (e.g. the shipped model) run on every augmented "
                                             "batch as a second teacher (facerec.train.reference)")
    p.add_argument("--reference-weight", type=float, default=0.0,
                   help="weight of pointing the embedding along the reference model's")
    p.add_argument("--fused-share", type=float, default=0.0,
                   help="match the structure term to the fused pack's cosines: the teacher's share of them, the "
                        "rest the reference model's (needs --reference-model and --structure-weight)")
    p.add_argument("--max-seconds", type=float, help="stop after the epoch during which this much time passed")
    p.add_argument("--stop-after-epoch", type=int,
                   help="end after this epoch, keeping the learning-rate schedule of --epochs (resumable)")
    p.add_argument("--held-out-split", default="single", choices=["single", "disjoint"],
                   help="disjoint: 150 held-out identities choose (epoch, averages), another 150 calibrate, never "
                        "trained on (from model v9; single: one set does both, as up to v8)")
    p.add_argument("--train-fraction", type=float, default=1.0,
                   help="train on this seeded fraction of the training identities (the data-slope measurement)")
    p.add_argument("--device", default="auto", help="auto (cuda if present, else cpu), cpu or cuda")
    precision = p.add_mutually_exclusive_group()
    precision.add_argument("--fp32", action="store_const", const=False, dest="bf16",
                           help="force float32 (default: bf16 autocast only where the hardware has native bf16)")
    precision.add_argument("--bf16", action="store_const", const=True, dest="bf16", help="force bf16 autocast")
    p = command("teacher-targets", cmd_teacher_targets,
                "dlib teacher descriptors of an aligned-face cache (needs the 'train' extra), resumable")
    p.add_argument("cache", help="output of `facerec-train prepare`, or a folder of aligned crops (celeba112)")
    p.add_argument("out", help="the .npz to write (paths, descriptor, descriptor_mirror)")
    p.add_argument("--training-only", action="store_true",
                   help="only the LFW protocol's training people (>= 3 photos): never the evaluation people")
    p.add_argument("--no-mirror", action="store_true", help="skip the descriptors of the mirrored crops")
    p.add_argument("--augmentations", type=int, default=0, metavar="K",
                   help="instead: K seeded augmentations of every crop (facerec.train.augmented_targets)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
    p = command("quantize", cmd_quantize, "int8 copy of an fp32 ONNX embedder (static, per channel; needs "
                                          "the 'train' extra)")
    p.add_argument("model", help="the fp32 ONNX export")
    p.add_argument("out")
    p.add_argument("--celeba", default="../shared/data/celeba112", help="training crops for the activation ranges")
    p = command("average", cmd_average, "one fp32 ONNX embedder whose weights are the mean of several stages' "
                                        "(the 'train' extra; which stages is chosen on held-out identities)")
    p.add_argument("out")
    p.add_argument("models", nargs="+", help="fp32 ONNX exports of one architecture (at least two)")
    p.add_argument("--weights", type=float, nargs="+", help="one weight per model (default: equal)")
    p = command("export-onnx", cmd_export_onnx, "export trained weights to ONNX and check it against torch")
    p.add_argument("weights")
    p.add_argument("out")
    p.add_argument("--check-cache", help="an aligned-face cache whose first faces are used for the check")
    p = command("calibrate", cmd_calibrate, "calibrate a model's false-accept rates on held-out identities and "
                "store them in its model card (run after any model change)", json_file=True)
    p.add_argument("--data", default="../shared/data", help="the data folder holding celeba112/")
    p.add_argument("--card", help="model card to update (default: the model's .json beside it)")
    p.add_argument("--resamples", type=int, default=200, help="bootstrap resamples over identities")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--identities", type=int, help="use only the first N held-out identities (a quick check)")
    p.add_argument("--embeddings", help="an .npz cache of the held-out embeddings, reused for the same model file")
    p.add_argument("--cohort-embeddings", help="an .npz cache of the score cohort's embeddings (same model file)")
    p.add_argument("--cohort-size", type=int, default=None,
                   help="faces in the score cohort (default: the size chosen on held-out identities; fewer for a "
                        "quick check)")
    p.add_argument("--no-cohort", action="store_true",
                   help="calibrate raw cosines only (no score cohort is made; the app then decides on cosines)")


def cmd_prepare(args) -> int:
    from facerec.datasets.cache import prepare_cache, read_manifest
    from facerec.faces.detect import FaceDetector

    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = progress_bar(total, "aligning")
            bar.update(done - 1)
        bar.update(1)

    settings = settings_from(args)
    summary = prepare_cache(args.data_dir, args.out, FaceDetector(settings.detector_score_threshold,
                                                                  settings.min_face_size, settings.detector_max_side),
                            progress=progress)
    if bar is not None:
        bar.close()
    data = {"photos": summary.photos, "detected": summary.detected, "fallbacks": summary.fallbacks,
            "unreadable": summary.unreadable, "mean_alignment_error_px": summary.mean_alignment_error,
            "seconds": summary.seconds, "identities": len({i for i, _ in read_manifest(args.out)})}
    emit(args, data, text=(f"{summary.detected}/{summary.photos} photos with a detected face "
                            f"({summary.detected / max(1, summary.photos):.2%}); {len(summary.fallbacks)} centre-crop "
                            f"fallback(s): {', '.join(summary.fallbacks[:10])}; {len(summary.unreadable)} unreadable; "
                            f"mean landmark residual {summary.mean_alignment_error:.2f} px"))
    return 0


def cmd_train(args) -> int:
    try:
        from facerec.train.data import load_sources
        from facerec.train.loop import TrainConfig, train
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    if (args.reference_weight or args.fused_share) and not args.reference_model:
        flag = "--reference-weight" if args.reference_weight else "--fused-share"
        raise FaceRecError(f"{flag} needs --reference-model (an ONNX embedder, e.g. the shipped model)")
    for model in (args.warm_start, args.reference_model):
        if model and not Path(model).is_file():
            raise FaceRecError(f"no such model: {model}")
    try:
        faces = load_sources(args.celeba, args.lfw_cache, args.teacher, held_out_split=args.held_out_split,
                             unlabelled=[tuple(pair) for pair in args.unlabelled])
    except ValueError as error:  # a teacher file that matches nothing, an unlabelled pair that does not pair
        raise FaceRecError(str(error)) from None
    if args.augmented_teacher:
        from facerec.train.data import attach_augmented_teacher

        try:
            attach_augmented_teacher(faces, args.augmented_teacher)
        except ValueError as error:
            raise FaceRecError(str(error)) from None
    if args.train_fraction < 1:
        from facerec.train.data import keep_identity_fraction
        keep_identity_fraction(faces, args.train_fraction)
    config = TrainConfig(head=args.head, stem=args.stem, epochs=args.epochs, batch_size=args.batch_size,
                         lr=args.lr, warmup_epochs=args.warmup_epochs, device=args.device, bf16=args.bf16, arcface_weight=args.arcface_weight,
                         distill_weight=args.distill_weight, structure_weight=args.structure_weight,
                         warm_start=args.warm_start, reference_model=args.reference_model,
                         reference_weight=args.reference_weight, fused_share=args.fused_share,
                         max_seconds=args.max_seconds, stop_after_epoch=args.stop_after_epoch,
                         held_out_split=args.held_out_split,
                         augmented_share=args.augmented_share if args.augmented_teacher else 0.0,
                         lookalike_share=args.lookalike_share, tail_weight=args.tail_weight,
                         ema_decay=args.ema_decay, flip_invariant_targets=args.flip_invariant_targets,
                         notes={**({"train_fraction": args.train_fraction} if args.train_fraction < 1 else {}),
                                **({"unlabelled": [list(pair) for pair in args.unlabelled]} if args.unlabelled
                                   else {}),
                                **({"augmented_teacher": args.augmented_teacher} if args.augmented_teacher else {})})
    record = train(config, faces, args.run_dir, log=lambda line: print(line, file=sys.stderr, flush=True))
    emit(args, record, text=f"trained {record.get('epoch')} epochs; weights in {args.run_dir}")
    return 0


def cmd_teacher_targets(args) -> int:
    from facerec.datasets.cache import MANIFEST_FILE, FolderCrops, RowView, load_cache
    from facerec.datasets.folders import list_identities
    from facerec.train.data import lfw_training_rows
    from facerec.train.teacher import compute_targets

    if (Path(args.cache) / MANIFEST_FILE).is_file():  # a `facerec-train prepare` cache
        faces, names, paths = load_cache(args.cache)
        rows = lfw_training_rows(names) if args.training_only else list(range(len(paths)))
        crops, paths = RowView(faces, rows), [paths[r] for r in rows]
    else:  # a folder of aligned crops, one sub-folder per identity (celeba112)
        files = [photo for photos in list_identities(args.cache).values() for photo in photos]
        crops, paths = FolderCrops(files), [f"{p.parent.name}/{p.name}" for p in files]
    total = len(paths) * (args.augmentations or 1)
    bar = progress_bar(total, "teacher")

    def progress(done: int, _total: int) -> None:
        bar.update(done - bar.n)

    if args.augmentations:
        from facerec.train.augmented_targets import compute_augmented_targets

        out = compute_augmented_targets(crops, paths, args.augmentations, args.out, workers=args.workers,
                                        progress=progress)
    else:
        out = compute_targets(crops, paths, args.out, mirror=not args.no_mirror, workers=args.workers,
                              progress=progress)
    bar.close()
    emit(args, {"out": str(out), "rows": total}, text=f"teacher descriptors of {total} crops in {out}")
    return 0


def cmd_quantize(args) -> int:
    try:
        from facerec.train.quantize import calibration_crops, quantize_int8
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    out = quantize_int8(args.model, calibration_crops(args.celeba), args.out)
    emit(args, {"out": str(out), "bytes": out.stat().st_size}, text=f"int8 model written to {out}")
    return 0


def cmd_average(args) -> int:
    try:
        from facerec.train.averaging import average_onnx
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    missing = [model for model in args.models if not Path(model).is_file()]
    if missing:
        raise FaceRecError(f"no such model: {missing[0]}")
    try:
        out = average_onnx(args.models, args.out, args.weights)
    except (ValueError, ImportError) as error:  # ImportError: onnx, of the 'train' extra
        raise FaceRecError(str(error)) from None
    emit(args, {"out": str(out), "models": args.models, "weights": args.weights},
          text=f"average of {len(args.models)} models written to {out}")
    return 0


def cmd_export_onnx(args) -> int:
    try:
        from facerec.train.export import export_onnx, load_embedder, max_difference
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    model = load_embedder(args.weights)
    digest = export_onnx(model, args.out)
    data = {"onnx": args.out, "sha256": digest}
    if args.check_cache:
        from facerec.datasets.cache import load_cache

        faces, _, _ = load_cache(args.check_cache)
        data["max_abs_difference"] = max_difference(model, args.out, faces[:64])
        if data["max_abs_difference"] >= 1e-3:
            raise FaceRecError(f"ONNX and torch disagree by {data['max_abs_difference']:.2e} (limit 1e-3)")
    emit(args, data, text=json.dumps(data))
    return 0


def cmd_calibrate(args) -> int:
    """The score cohort first (`facerec.evaluation.cohort_model`: one face of each of a few thousand training
    identities, written beside the model), then the FAR curves of raw cosines and of the normalised scores."""
    from facerec.evaluation.calibrate_model import calibrate_model, card_split, held_out_photos, write_to_card
    from facerec.evaluation.cohort_model import COHORT_SIZE, make_cohort, write_cohort
    from facerec.openset.cohort import Cohort, cohort_path

    settings = settings_from(args)
    card_path = Path(args.card) if args.card else settings.model_card_path
    split = card_split(settings.model_card_path)  # the split the model was trained with: its card says
    paths, _ = held_out_photos(args.data, args.identities, split)
    cohort = None
    args.cohort_size = args.cohort_size or COHORT_SIZE
    if not args.no_cohort:
        with progress_bar(args.cohort_size, "score cohort") as bar:
            cohort, provenance = make_cohort(settings.model_path, args.data, size=args.cohort_size, split=split,
                                             flip_tta=settings.flip_tta, num_threads=settings.num_threads,
                                             embeddings_cache=args.cohort_embeddings, progress=bar.update)
        written = write_cohort(card_path, cohort, provenance)
        cohort = Cohort.load(cohort_path(card_path), written["sha256"])  # as the app reads it (float16)
    with progress_bar(len(paths), "embedding") as bar:  # once, for the normalised and the raw calibration
        calibration, cosine = calibrate_model(settings.model_path, args.data, flip_tta=settings.flip_tta,
                                              resamples=args.resamples, seed=args.seed, identities=args.identities,
                                              num_threads=settings.num_threads, progress=bar.update,
                                              embeddings_cache=args.embeddings, split=split, cohort=cohort)
    write_to_card(card_path, calibration, cosine)
    tail = calibration["tail"]
    key = "cosine" if cohort is None else "score"
    rows = [[rate_text(r["far"]), f"{r[key]:.4f}",
             "–".join(f"{v:.4f}" for v in r.get(f"{key}_interval", [])),
             "" if r.get(f"{key}_empirical") is None else f"{r[f'{key}_empirical']:.4f}",
             r.get("tar", ""), r["from"]]
            for r in calibration["curve"] if _is_decade(r["far"])]
    emit(args, calibration, rows, ["FAR", key, f"{calibration['bootstrap']['interval']:.0%} interval",
                                    "empirical", "TAR", "from"],
          text=(f"calibrated {Path(settings.model_path).name} on {calibration['identities']} held-out identities "
                f"({calibration['photos']} photos, {calibration['impostor_pairs']:,} impostor pairs); tail above "
                f"{tail['threshold']:.4f} (top {rate_text(tail['rate'])}): generalized Pareto shape {tail['shape']:.3f} "
                f"({' to '.join(str(v) for v in tail.get('shape_interval', []))}), scale {tail['scale']:.4f}; "
                f"written to {card_path}"))
    return 0


def _is_decade(value: float) -> bool:
    exponent = math.log10(value)
    return abs(exponent - round(exponent)) < 1e-6


if __name__ == "__main__":
    sys.exit(main())
