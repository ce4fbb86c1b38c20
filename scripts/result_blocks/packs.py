"""Model packs: dlib's public-domain network as facerec's ONNX conversion, against dlib's own runtime."""

from __future__ import annotations

from result_blocks.common import cpu_text, load


def public_domain_block() -> str:
    agreement, oneshot = load("dlib_onnx_agreement"), load("public_domain_oneshot")
    if not agreement:
        return "(no dlib_onnx_agreement.json)"
    ms = agreement["ms_per_face_one_thread"]
    cosine, difference = agreement["cosine"], agreement["max_abs_difference"]
    rows = ["| dlib's ResNet, same faces and shapes | ms per face, one thread |", "|---|---|",
            f"| facerec's ONNX conversion (dlib's chip + onnxruntime, fp32) | {ms['facerec_chip_and_onnx']:.1f} |",
            f"| dlib's own runtime (`compute_face_descriptor`) | {ms['dlib_descriptor']:.1f} |"]
    if "face_recognition_encoding" in ms:
        rows.append(f"| face_recognition's `face_encodings` (the peer) | {ms['face_recognition_encoding']:.1f} |")
    text = ("\n".join(rows) + f"\n\nOver {agreement['faces']:,} LFW faces (training people only) the converted "
            f"network's descriptor is dlib's own: one minus their cosine is at most {1 - cosine['min']:.0e} "
            f"(median {1 - cosine['median']:.0e}; the issue asks for a median cosine of at least 0.999), the largest "
            f"difference of any value {difference['max']:.1e}; "
            f"{agreement['speedup_descriptor']:.1f}x as fast. {cpu_text(agreement)}, "
            f"{agreement['provenance']['date'][:10]}.")
    if oneshot:
        figures = oneshot["figures"]
        distractors = oneshot["distractors"]
        key = f"one_shot_rank1_with_{distractors}_distractors"
        lines = ["| public-domain parts only, ranked by | LFW one-shot rank-1 | with "
                 f"{distractors:,} distractors |", "|---|---|---|"]
        labels = {"euclidean": "Euclidean, raw descriptors (dlib's metric)",
                  "cosine": "cosine, descriptors centred on the gallery's mean",
                  "euclidean_flip": "Euclidean, plus the mirrored chip", "cosine_flip": "cosine, plus the mirrored chip"}
        lines += [f"| {labels[name]} | {row['one_shot_rank1']:.3f} | {row[key]:.3f} |" for name, row in figures.items()]
        missed = oneshot["no_face_found"]
        text += ("\n\n" + "\n".join(lines) + f"\n\nFront end: {oneshot['front_end']}; no face found in "
                 f"{missed['enrolled']} enrolled photos, {missed['queries']} queries and {missed['distractors']} "
                 f"distractors (counted as misses). {cpu_text(oneshot)}, {oneshot['provenance']['date'][:10]}.")
    choice = load("public_domain_embedding")
    if choice:
        names = {"raw_unit": "raw descriptor, unit length", "raw_unit_flip": "raw, plus the mirrored chip, unit length",
                 "centred_unit": "centred on other people's mean, unit length",
                 "centred_unit_flip": "centred, plus the mirrored chip", "raw_euclidean_dlib": "dlib's own: Euclidean, raw"}
        lines = ["| dlib's descriptor as | held-out one-shot rank-1 | TAR at FAR 1e-3 | TAR at FAR 1e-4 |",
                 "|---|---|---|---|"]
        for name, row in choice["figures"].items():
            mark = " (chosen)" if name == choice["chosen"] else ""
            lines.append(f"| {names[name]}{mark} | {row['one_shot_rank1']:.4f} | {row['tar_at_far_0.001']:.4f} | "
                         f"{row['tar_at_far_0.0001']:.4f} |")
        text += ("\n\n" + "\n".join(lines) + f"\n\n{choice['identities']} held-out identities ({choice['split']}), "
                 f"{choice['photos']:,} photos, {choice['draws']} draws; rule: {choice['rule']}. "
                 f"{cpu_text(choice)}, {choice['provenance']['date'][:10]}.")
    return text


PACK_NAMES = ("facerec-r18-arcface", "dlib-public-domain", "facerec-dlib-fused")
USE = {"facerec-r18-arcface": "no", "dlib-public-domain": "**yes**", "facerec-dlib-fused": "no"}
SPEED_RUNS = ("pack_speed", "pack_speed_amd_epyc_avx2")  # one CPU with AVX-512 VNNI, one with AVX2 alone


def speed_runs() -> list[tuple[str, dict]]:
    """Each pack-speed run there is, with a short name of its CPU's vector kind (where int8 has VNNI or not)."""
    runs = []
    for stem in SPEED_RUNS:
        result = load(stem)
        if result:
            flags = result["provenance"]["cpu"].get("flags") or []
            runs.append(("AVX-512 VNNI" if "avx512_vnni" in flags else "AVX2, no VNNI" if "avx2" in flags
                         else "no AVX2", result))
    return runs


def _speed_cell(timing: dict) -> str:
    return f"{_cell(timing.get('embed_ms_per_face'), '.1f')} / {_cell(timing.get('detect_ms_per_photo'), '.0f')}"


def pack_eval(name: str, distractors: bool) -> dict:
    """`facerec eval` of a pack: the default pack's files have no suffix."""
    stem = "eval_lfw2_distractors" if distractors else "eval_lfw2"
    return load(stem if name == PACK_NAMES[0] else f"{stem}_{name}")


def _at_4848(result: dict) -> dict:
    sizes = (result.get("open_set") or {}).get("sizes") or []
    return max(sizes, key=lambda row: row["gallery_people"]) if sizes else {}


def _held_out(accuracy: dict, name: str) -> dict:
    return next((row for row in accuracy.get("rows", []) if row["pack"] == name and row["scores"] == "as-norm"), {})


def _cell(value, form: str = ".3f") -> str:
    return "–" if value is None else format(value, form)


def packs_headline_block() -> str:
    """README: one row per pack (LFW one-shot, strangers at the default, held-out TAR, speed, commercial use)."""
    accuracy, runs = load("pack_accuracy"), speed_runs()
    rows = ["| pack (`--pack`) | commercial use | LFW one-shot / with 4,069 distractors | FPIR / DIR at 4,848 people "
            "(default 1%) | held-out TAR at FAR 1e-4 / 1e-5 | "
            + " | ".join(f"ms a face / a photo's detection, 1 thread, {kind}" for kind, _ in runs) + " |",
            "|---|---|---|---|---|" + "---|" * len(runs)]
    for name in PACK_NAMES:
        plain, crowded = pack_eval(name, False), pack_eval(name, True)
        largest, held = _at_4848(crowded), _held_out(accuracy, name)
        rows.append(f"| `{name}` | {USE[name]} | {_cell(plain.get('rank1'))} / {_cell(crowded.get('rank1'))} | "
                    f"{_cell(largest.get('fpir'), '.2%')} / {_cell(largest.get('dir'))} | "
                    f"{_cell(held.get('tar_at_far_1e-04'))} / {_cell(held.get('tar_at_far_1e-05'))} | "
                    + " | ".join(_speed_cell(run.get("rows", {}).get(name, {})) for _, run in runs) + " |")
    rows.append(f"| face_recognition (the peer) | dlib's code and models | {_cell(load('peer').get('face_recognition', {}).get('rank1'))}"
                " / – | – | – | "
                + " | ".join(_speed_cell(run.get("rows", {}).get("face_recognition_hog", {})) for _, run in runs) + " |")
    where = "; ".join(sorted({cpu_text(r) for r in [accuracy] + [run for _, run in runs] if r}))
    return ("\n".join(rows) + f"\n\nMeasured on: {where}; each speed column is one run of every pack and the peer "
            f"on the same photos. Held-out: {accuracy.get('identities', '–')} CelebA people never trained on, every pair.")


def packs_block() -> str:
    """docs/results.md: every pack on every protocol, with the commands."""
    accuracy = load("pack_accuracy")
    if not accuracy:
        return "(no pack_accuracy.json)"
    lines = ["| pack | scores | TAR at FAR 1e-3 | 1e-4 | 1e-5 |", "|---|---|---|---|---|"]
    for row in accuracy["rows"]:
        lines.append(f"| {row['pack']} | {row['scores']} | {row['tar_at_far_1e-03']:.3f} | {row['tar_at_far_1e-04']:.3f} | "
                     f"{row['tar_at_far_1e-05']:.3f} |")
    text = ("\n".join(lines) + f"\n\n{accuracy['identities']} held-out identities ({accuracy['split']}), "
            f"{accuracy['photos']:,} photos: {accuracy['genuine_pairs']:,} genuine and {accuracy['impostor_pairs']:,} "
            f"impostor pairs; empirical thresholds. {cpu_text(accuracy)}, {accuracy['provenance']['date'][:10]}.")
    lines = ["| pack | LFW one-shot rank-1 | with 4,069 distractors | oracle DIR at 1% FPIR | FPIR at 4,848 people, "
             "default 1% | DIR there |", "|---|---|---|---|---|---|"]
    for name in PACK_NAMES:
        plain, crowded = pack_eval(name, False), pack_eval(name, True)
        if not plain:
            continue
        largest = _at_4848(crowded)
        oracle = (crowded.get("open_set") or {}).get("dir_at_fpir_0.01", {}).get("dir")
        lines.append(f"| {name} | {plain['rank1']:.3f} | {_cell(crowded.get('rank1'))} | {_cell(oracle)} | "
                     f"{_cell(largest.get('fpir'), '.2%')} | {_cell(largest.get('dir'))} |")
    text += ("\n\n" + "\n".join(lines) + "\n\nThe public-domain pack's LFW rows were measured while its detector ran in "
             "dlib's own runtime; the ONNX conversion it ships finds the same boxes (below), so they stand.")
    detector = load("dlib_mmod_agreement")
    if detector:
        ms = detector["ms_per_photo_one_thread"]
        text += (f"\n\nThe public-domain pack's MMOD detector, converted to ONNX with dlib's pyramid and decoding "
                 f"(`python benchmarks/dlib_mmod_agreement.py`): the same boxes as dlib's own runtime in "
                 f"{detector['photos_with_the_same_boxes']:,} of {detector['photos']:,} LFW photos "
                 f"({detector['faces_dlib']:,} faces; confidences within {detector['largest_confidence_difference']:.0e}), "
                 f"{ms['facerec_onnx']:.1f} ms a photo on one thread against dlib's {ms['dlib']:.1f} "
                 f"({detector['speedup']:.1f}x, one run). {cpu_text(detector)}, {detector['provenance']['date'][:10]}.")
    for kind, run in speed_runs():
        lines = [f"| {kind}: {cpu_text(run)} | detection ms a photo (median) | ms a face: alignment + network(s) | "
                 "ms a photo in all | face_recognition (HOG) over it, a face | install: files + runtime extra |",
                 "|---|---|---|---|---|---|"]
        ratios = run.get("face_recognition_hog_over_pack", {})
        for name, row in run["rows"].items():
            size = run.get("install_mb", {}).get(name)
            install = f"{size['files']:.0f} MB + {size['extra']:.0f} MB" if size else "–"
            ratio = ratios.get(name, {}).get("embed_per_face")
            lines.append(f"| {name} | {row['detect_ms_per_photo']:.1f} ({row['detect_ms_per_photo_median']:.1f}) | "
                         f"{row['embed_ms_per_face']:.1f} | {row['ms_per_photo']:.1f} | "
                         f"{_cell(ratio, '.2f')}{'x' if ratio else ''} | {install} |")
        text += ("\n\n" + "\n".join(lines) + f"\n\nOne thread, the same {run['rows'][PACK_NAMES[0]]['photos']} LFW "
                 f"photos for every row, one run ({run['photos_from']}), {run['provenance']['date'][:10]}.")
    return text + (" face_recognition's `cnn` is dlib's MMOD in dlib's runtime on the photo upsampled once (its "
                   "default). Without VNNI, onnxruntime's int8 convolutions add pairs of products in 16 bits: facerec's "
                   "int8 network slows down there far more than dlib's network, which runs in fp32.")
