"""Where dlib's five landmarks fall in facerec's 112x112 aligned crop: the public-domain pack's alignment constant.

    python scripts/dlib_landmark_template.py --data ../shared/data            # print the measured points
    python scripts/dlib_landmark_template.py --data ../shared/data --check    # exit 1 unless the code's constant
                                                                              # is what this measures (to 0.01 px)

dlib's 5-point predictor runs on the first crop of 2,000 training identities (the seeded order of
`facerec.evaluation.cohort_model.cohort_candidates`, neither held-out set), inside the box where an aligned face
lies (`facerec.faces.dlib_embed.CROP_FACE_BOX`); the mean of each point is `DLIB_POINTS_IN_CROP`
(`facerec.faces.dlib_detect`), by which a photo's dlib landmarks are aligned like RetinaFace's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.evaluation.cohort_model import cohort_candidates  # noqa: E402
from facerec.faces.dlib_detect import DLIB_POINTS_IN_CROP  # noqa: E402
from facerec.faces.dlib_embed import CROP_FACE_BOX  # noqa: E402
from facerec.packs.dlib_files import dlib_model_folder  # noqa: E402

FACES = 2000


def measured(data: str) -> np.ndarray:
    import dlib

    predictor = dlib.shape_predictor(str(dlib_model_folder() / "shape_predictor_5_face_landmarks.dat"))
    box = dlib.rectangle(*CROP_FACE_BOX)
    points = []
    for path in cohort_candidates(data, "disjoint")[:FACES]:
        shape = predictor(np.asarray(Image.open(path).convert("RGB")), box)
        points.append([[shape.part(i).x, shape.part(i).y] for i in range(5)])
    return np.round(np.mean(points, axis=0), 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    points = measured(args.data)
    print(np.array2string(points, separator=", "))
    if args.check and not np.allclose(points, DLIB_POINTS_IN_CROP, atol=0.01):
        print("DLIB_POINTS_IN_CROP differs from this measurement", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
