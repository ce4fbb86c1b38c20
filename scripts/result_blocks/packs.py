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
