"""`facerec eval | eval-pairs`: batch evaluation of a labelled `<identity>/<photo>` folder (one-shot
identification, open-set rates at the threshold policy, or an existing gallery) and LFW-style pair verification."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from facerec.cli.output import emit, open_gallery, progress_bar, settings_from, warn
from facerec.cli.registry import CommandAdder
from facerec.errors import InvalidArgument
from facerec.openset.model_card import policy_for, scorer_for


def register(command: CommandAdder, sub, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the `facerec` parser."""
    p = command("eval", cmd_eval, "one-shot identification accuracy on a folder-per-identity dataset",
                json_file=True)
    p.add_argument("data_dir")
    p.add_argument("--max-per-identity", type=int, help="only identities with at most N photos (2 = LFW protocol)")
    p.add_argument("--distractors", action="store_true", help="also enroll identities with a single photo")
    p.add_argument("--open-set", action="store_true",
                   help="also measure FPIR and DIR at the threshold policy, at several gallery sizes")
    p.add_argument("--gallery-sizes", default="100,1000,all",
                   help="open set: gallery sizes in people, comma-separated ('all' = every enrolled person)")
    p.add_argument("--photos-per-person", metavar="K,K,...",
                   help="open set in galleries of K photos per person (e.g. 1,3,5): people with more photos than "
                        "the largest K are enrolled, one-photo people are the strangers")
    p.add_argument("--existing", action="store_true", help="query the gallery in --home with labelled probes")
    p.add_argument("--seed", type=int, default=51)
    p.add_argument("--report", help="write plots, JSON and a markdown summary to this folder")
    p = command("eval-pairs", cmd_eval_pairs, "LFW-style 10-fold pair verification accuracy", json_file=True)
    p.add_argument("pairs")
    p.add_argument("data_dir")
    p.add_argument("--report")


def cmd_eval(args) -> int:
    from facerec.evaluation.report import write_one_shot_report

    if args.existing:
        return _eval_existing(args)
    if args.photos_per_person:
        return _eval_photos_per_person(args)
    from facerec.evaluation.oneshot import evaluate_one_shot, plan_protocol

    enrolled, queries, extra = plan_protocol(Path(args.data_dir), args.max_per_identity, args.distractors,
                                             args.seed)
    with progress_bar(len(enrolled) + len(extra) + len(queries), "embedding") as bar:
        result = evaluate_one_shot(args.data_dir, settings_from(args), args.max_per_identity, args.distractors,
                                   args.open_set, args.seed, progress=bar.update, gallery_sizes=args.gallery_sizes)
    figures = result.figures
    if args.report:
        write_one_shot_report(result, args.report, "facerec " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    warn(eval_warnings(figures))
    rows = [["identities", figures["n_identities"]], ["distractors", figures["n_distractors"]],
            ["queries", figures["n_queries"]], ["rank-1", f"{figures['rank1']:.4f}"],
            ["rank-5", f"{figures['rank5']:.4f}"],
            *[[f"TAR@FAR={far} ({figures.get('score', 'score')})", f"{figures['tar_at_far'][far]['tar']:.4f}"]
              for far in ("1e-5", "1e-4", "1e-3", "1e-2")],
            ["ClosestIsPositiveAccuracy", f"{figures['closest_is_positive_accuracy']:.4f}"],
            *[[k, f"{v:.4f}"] for k, v in figures["median_distances"].items()],
            ["detection failures", figures["detection_failures"]],
            ["photos/s", figures["photos_per_second"]]]
    text = ""
    if "open_set" in figures:
        for key in ("dir_at_fpir_0.01", "dir_at_fpir_0.1"):
            rows.append([key.replace("_", " ") + " (threshold chosen on the results)",
                         f"{figures['open_set'][key]['dir']:.4f}"])
        text = open_set_table(figures["open_set"])
    emit(args, figures, rows, ["figure", "value"])
    if text and args.json != "-":
        print("\n" + text)
    return 0


def eval_warnings(figures: dict) -> list[str]:
    """What an evaluation's reader must know before trusting it: training people among the evaluated ones, open-set
    figures from too few searches (the same warnings the report's summary opens with)."""
    from facerec.evaluation.report import report_warnings

    return report_warnings(figures)


def open_set_table(open_set: dict) -> str:
    """The open-set figures at the threshold policy, one markdown row per gallery size (docs/results.md's table)."""
    from facerec.evaluation.open_set import markdown_table

    return markdown_table(open_set)


def _eval_existing(args) -> int:
    from facerec.evaluation.existing import evaluate_existing
    from facerec.evaluation.report import write_json

    with open_gallery(args) as gallery:
        figures = evaluate_existing(gallery, args.data_dir, progress_factory=progress_bar)
    warn(eval_warnings(figures))
    if args.report:
        Path(args.report).mkdir(parents=True, exist_ok=True)
        write_json(figures, Path(args.report) / "eval.json")
    emit(args, figures, [[k, v] for k, v in figures.items() if not isinstance(v, (dict, list))],
          ["figure", "value"])
    return 0


def _eval_photos_per_person(args) -> int:
    from facerec.datasets.folders import list_identities
    from facerec.evaluation.embedding import embed_photos
    from facerec.evaluation.photos_per_person import evaluate_photos_per_person, markdown_table
    from facerec.faces.pipeline import FacePipeline
    from facerec.provenance import provenance

    try:
        photos = tuple(sorted({int(k) for k in args.photos_per_person.split(",") if k.strip()}))
    except ValueError:
        raise InvalidArgument("--photos-per-person takes whole numbers, e.g. 1,3,5") from None
    if not photos or photos[0] < 1:
        raise InvalidArgument("--photos-per-person takes numbers of at least 1, e.g. 1,3,5")
    settings = settings_from(args)
    identities = list_identities(args.data_dir)
    people = {name: paths for name, paths in identities.items() if len(paths) > max(photos)}
    strangers = [paths[0] for paths in identities.values() if len(paths) == 1]
    paths = [p for name in sorted(people) for p in people[name]] + strangers
    pipeline = FacePipeline(settings)
    with progress_bar(len(paths), "embedding") as bar:
        embedded = embed_photos(pipeline, paths, progress=bar.update)
    vectors, start = {}, 0
    for name in sorted(people):
        vectors[name] = embedded.embeddings[start:start + len(people[name])]
        start += len(people[name])
    policy = policy_for(settings, pipeline.embedder.sha256)
    result = evaluate_photos_per_person(vectors, embedded.embeddings[start:], policy, photos, args.seed,
                                        scorer_for(settings, policy))
    result["provenance"] = provenance(settings.model_path, settings.num_threads, pipeline.embedder)
    emit(args, result, text=markdown_table(result) + f"\npromise kept: {result['promise_kept']} galleries")
    return 0


def cmd_eval_pairs(args) -> int:
    from facerec.evaluation.pairs import evaluate_pairs, read_pairs
    from facerec.evaluation.report import write_pairs_report
    from facerec.faces.pipeline import FacePipeline

    pairs, _ = read_pairs(args.pairs, args.data_dir)
    unique = len({p for a, b, _ in pairs for p in (a, b)})
    with progress_bar(unique, "embedding") as bar:
        result = evaluate_pairs(args.pairs, args.data_dir, FacePipeline(settings_from(args)), progress=bar.update)
    if args.report:
        write_pairs_report(result, args.report, "facerec " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    figures = result.figures
    warn(eval_warnings(figures))
    emit(args, figures, [["accuracy", f"{figures['accuracy_mean']:.4f} +- {figures['accuracy_std']:.4f}"],
                          ["pairs", figures["pairs"]], ["detection failures", figures["detection_failures"]],
                          ["photos/s", figures["photos_per_second"]]], ["figure", "value"])
    return 0
