"""The headline tables: LFW accuracy beside the peer, the CPUs measured, speed, and the gallery growth line."""

from __future__ import annotations

import json

from result_blocks.common import CARD, PEER_REFERENCE, RESULTS, cpu_text, figure, load, model_text, ratio


def accuracy_block() -> str:
    one_shot, distractors, pairs = load("eval_lfw2"), load("eval_lfw2_distractors"), load("eval_pairs")
    peer, peer_pairs = load("peer"), load("peer_pairs")
    rows = ["| LFW protocol | facerec | face_recognition (dlib), same faces, same run | command |",
            "|---|---|---|---|"]
    if one_shot:
        theirs = peer.get("face_recognition", {}).get("rank1")
        rows.append(f"| one-shot rank-1, {one_shot['n_identities']:,} people | **{one_shot['rank1']:.3f}** (rank-5 {one_shot['rank5']:.3f}) | "
                    f"{figure(theirs)} (earlier run {PEER_REFERENCE['one_shot']}) | "
                    "`facerec eval ../shared/data/lfw --max-per-identity 2` |")
    if distractors:
        rows.append(f"| one-shot rank-1 with 4,069 one-photo distractors | **{distractors['rank1']:.3f}** "
                    f"({round(distractors['rank1'] * distractors['n_queries'])} of {distractors['n_queries']}) | "
                    f"earlier run {PEER_REFERENCE['distractors']} | `... --distractors --open-set` |")
    if one_shot:
        tar = one_shot["tar_at_far"]
        rows.append(f"| TAR at FAR 1e-3 / 1e-2 (query vs enrolled) | {tar['1e-3']['tar']:.3f} / "
                    f"{tar['1e-2']['tar']:.3f} | – | first command |")
    if pairs:
        theirs = peer_pairs.get("face_recognition", {})
        peer_figure = (f"{theirs['accuracy_mean']:.3f} ± {theirs['accuracy_std']:.3f}" if theirs else "–")
        rows.append(f"| pairs, 10-fold verification accuracy (overlaps training people) | "
                    f"**{pairs['accuracy_mean']:.3f} ± {pairs['accuracy_std']:.3f}** | {peer_figure} (earlier run "
                    f"{PEER_REFERENCE['pairs']}) | `facerec eval-pairs ../shared/data/protocols/lfw_pairs.txt "
                    "../shared/data/lfw` |")
    sources = [r for r in (one_shot, distractors, pairs, peer) if r]
    where = "; ".join(sorted({f"{cpu_text(r)}, model {model_text(r)}" for r in sources}))
    return "\n".join(rows) + f"\n\nMeasured on: {where}."


def cpus_block() -> str:
    """One row per kind of CPU: LFW one-shot, agreement with the exact graph, speed against the peer. A real CPU's
    row is one peer run on it (`benchmarks/peer.py`: both libraries on the same faces, one thread, interleaved):
    `peer.json`, and `peer_<cpu>.json` for each other CPU it was run on."""
    rows = ["| CPU | how | int8 kernels | LFW one-shot rank-1 | embeddings vs exact graph (min cosine) | "
            "facerec / dlib faces/s, 1 thread, one run |", "|---|---|---|---|---|---|"]
    for name in ["peer", *sorted(p.stem for p in RESULTS.glob("peer_*.json") if p.stem != "peer_pairs")]:
        peer = load(name)
        if not peer:
            continue
        record = peer["provenance"]
        embedder = record.get("embedder") or {}
        rows.append(f"| {cpu_text(peer)} | real | {record['cpu'].get('int8_dot_product', 'not recorded')} | "
                    f"**{peer['facerec']['rank1']:.3f}** (dlib {peer['face_recognition']['rank1']:.3f}, same run) | "
                    f"{figure(embedder.get('min_cosine'), 4)} (self-check, {embedder.get('path', 'path not recorded')}) | "
                    f"{ratio(peer.get('speed_ratio_facerec_over_face_recognition'), peer)} |")
    for name in sorted(p.stem for p in RESULTS.glob("eval_lfw2_emulated_*.json")):
        emulated = load(name)
        cpu = emulated["emulated"]["qemu_cpu"]
        cosine = emulated["cosine_emulated_vs_this_cpu"]
        rows.append(f"| {cpu} (AVX2, FMA; no AVX-512, no VNNI) | emulated: qemu-user `-cpu {cpu}` on "
                    f"{cpu_text(emulated)} | no VNNI (16-bit pair sums) | **{emulated['emulated']['rank1']:.3f}** "
                    f"(embedder emulated; detection native) | {cosine['min']:.4f} vs this CPU's fused kernels "
                    f"({2 * emulated['people']:,} photos of {emulated['people']:,} people) | not measurable under "
                    "emulation |")
    for name in sorted(p.stem for p in RESULTS.glob("op_profile_*.json")):
        profiled = load(name)
        stages = profiled["share_by_stage"]
        trunk = ", ".join(f"{stages.get(f'features.{k}', 0):.0%}" for k in (4, 5, 6, 7))
        rows.append("")
        rows.append(f"Where the embedder's time goes on {cpu_text(profiled)} (`benchmarks/op_profile.py`, one thread, "
                    f"the face and its mirror: {profiled['ms_per_face_with_flip_1_thread']:.1f} ms): int8 "
                    f"convolutions take {profiled['share_by_operator'].get('QLinearConv', 0):.1%} of it; the "
                    f"trunk's four stages {trunk}, the stem {stages.get('features.0', 0):.1%}.")
    counted = load("instruction_count")
    if counted:
        per_face = counted["instructions_per_face"]
        rows.append("")
        rows.append(f"Before a real AVX2-only machine was at hand, an estimate of the speed there: valgrind runs the same "
                    f"x86 code on a CPU without AVX-512 (so onnxruntime takes its int8 kernels without VNNI) and "
                    f"counts {per_face['facerec'] / 1e6:,.0f} M instructions per face for facerec (flip) against "
                    f"{per_face['face_recognition'] / 1e6:,.0f} M for dlib: "
                    f"**{counted['ratio_face_recognition_over_facerec']:.2f}x** "
                    f"(`benchmarks/instruction_count.py`, {counted['faces']} faces; a count, not a timing).")
    return "\n".join(rows)


def speed_line_block() -> str:
    """The README's one sentence on speed: the peer ratio on each real CPU it was measured on (`cpus_block`)."""
    ratios = []
    for name in ["peer", *sorted(p.stem for p in RESULTS.glob("peer_*.json") if p.stem != "peer_pairs")]:
        peer = load(name)
        if peer:
            ratios.append(f"{peer['speed_ratio_facerec_over_face_recognition']:.1f}x less time than dlib on "
                          f"{cpu_text(peer)}")
    return ("Per face, on one thread, with the same faces in one run: facerec took " + "; ".join(ratios) + ".")


def peer_block() -> str:
    peer = load("peer")
    if not peer:
        return "(no peer.json)"
    ours, theirs = peer["facerec"], peer["face_recognition"]
    people = f" ({peer['people']:,} people)" if "people" in peer else ""
    rows = [f"| | rank-1{people} | ms per face (embedding) | faces/s | ms per photo end to end |",
            "|---|---|---|---|---|",
            f"| facerec (ResNet18 int8 ONNX, flip: the default) | {ours['rank1']:.3f} | "
            f"{ours['ms_per_face_embed']:.1f} | {ours['faces_per_s']:.1f} | {ours['ms_per_photo_end_to_end']:.1f} |",
            f"| face_recognition (dlib ResNet) | {theirs['rank1']:.3f} | {theirs['ms_per_face_embed']:.1f} | "
            f"{theirs['faces_per_s']:.1f} | {theirs['ms_per_photo_end_to_end']:.1f} |"]
    return ("\n".join(rows) + f"\n\nfacerec embeds **{peer['speed_ratio_facerec_over_face_recognition']:.2f}x** "
            f"as many faces per second, on {cpu_text(peer)}, model {model_text(peer)}, "
            f"{peer['provenance']['date'][:10]}.")


def speed_block() -> str:
    one, every = load("speed_1thread"), load("speed_all")
    if not one or not every:
        return "(no speed_1thread.json / speed_all.json)"
    rows = ["| stage | 1 thread | all cores |", "|---|---|---|",
            f"| detection, 250x250 photo | {one['detect_ms_250x250']:.1f} ms | {every['detect_ms_250x250']:.1f} ms |",
            f"| detection, 1280x960 photo | {one['detect_ms_1280x960']:.0f} ms | {every['detect_ms_1280x960']:.0f} ms |",
            f"| alignment, per face | {one['align_ms_per_face']:.1f} ms | {every['align_ms_per_face']:.1f} ms |"]
    for label, key in (("no flip", "embed_faces_per_s_batch{}"),
                       ("flip, the default", "embed_faces_per_s_batch{}_flip_tta")):
        rows.append(f"| embedding, faces/s at batch 1 / 32 ({label}) | {one[key.format(1)]:.1f} / "
                    f"{one[key.format(32)]:.1f} | {every[key.format(1)]:.1f} / {every[key.format(32)]:.1f} |")
    rows.append(f"| identify, ms per photo end to end (one face) | "
                f"{one['identify_ms_per_photo_end_to_end']:.0f} ms | {every['identify_ms_per_photo_end_to_end']:.0f} ms |")
    cores = every["provenance"]["cpu"]["cores"]
    return "\n".join(rows) + f"\n\nOn {cpu_text(one)}, {cores} cores, model {model_text(one)}."


def peer_open_set_block() -> str:
    """facerec's and dlib's oracle DIR on the same faces, in one run (benchmarks/peer_open_set.py)."""
    result = load("open_set_peer")
    if not result:
        return "(not measured yet: `python benchmarks/peer_open_set.py --out benchmarks/results/open_set_peer.json`)"
    columns = ("facerec_normalised", "facerec_raw_cosine", "face_recognition_dlib")
    rows = ["| LFW, 4,848 people, same faces, one run | facerec, normalised score | facerec, raw cosine | "
            "face_recognition (dlib), Euclidean |", "|---|---|---|---|"]
    for fpir in ("0.1", "0.01"):
        cells = " | ".join(f"{result[c][f'dir_at_fpir_{fpir}']['dir']:.3f}" for c in columns)
        rows.append(f"| oracle DIR at {float(fpir):.0%} FPIR | {cells} |")
    return ("\n".join(rows) + f"\n\n{result['mated_searches']} mated searches; facerec's RetinaFace box of each "
            f"photo's central face handed to face_recognition. Measured on: {cpu_text(result)}, model "
            f"{model_text(result)}.")


def growth_block() -> str:
    """The expected true-match rate at 10 / 100 / 1,000 / 10,000 enrolled faces at the default stranger-match rate,
    from the shipped model card (what the Health tab says of a gallery of that size)."""
    from facerec.openset.model_card import policy_for
    from facerec.settings import Settings

    settings = Settings()
    policy = policy_for(settings)
    rules = [(faces, policy.for_gallery(faces)) for faces in (10, 100, 1_000, 10_000)]
    card = json.loads(CARD.read_text())
    return ("| enrolled faces | " + " | ".join(f"{faces:,}" for faces, _ in rules) + " |\n|---|"
            + "---|" * len(rules) + "\n| threshold | " + " | ".join(f"{rule.threshold:.3f}" for _, rule in rules)
            + " |\n| a new photo of an enrolled person recognised | "
            + " | ".join(f"{rule.true_match_rate:.0%}" for _, rule in rules) + " |\n\n"
            f"At an accepted stranger-match rate of {settings.fpir:.0%}, from the model card of "
            f"`{card['sha256'][:12]}` (its calibration on held-out identities). More photos per person raise these "
            "figures "
            "([results](docs/results.md)).")
