"""Worker for tests/test_gallery_crash.py (not a test module): enroll photos one by one until killed.

Usage: python helpers_crash_worker.py HOME PHOTOS_JSON SUCCESS_LOG [SAVE_INDEX_EVERY]

PHOTOS_JSON holds [[name, photo path], ...]. Names already in the gallery are skipped, so a restarted worker
continues where the killed one stopped. After each enrollment returns, the name is appended to SUCCESS_LOG and
the log is fsync'ed: a name in the log was committed before the log line was written, never the reverse.
SAVE_INDEX_EVERY (default 3) makes the gallery save its FAISS index that often, so kills also land mid-save.
Prints "ready" once the gallery is open and the models are loaded, "finished" when every photo is enrolled.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str]) -> int:
    home, photos_file, log_path = argv[:3]
    save_every = int(argv[3]) if len(argv) > 3 else 3

    import facerec.vectors.following as index_module
    from facerec.errors import MultipleFaces
    from facerec.gallery import Gallery
    from facerec.gallery.composition import parts_of
    from facerec.settings import Settings

    index_module.SAVE_EVERY = save_every  # save the index often: more crash windows inside index.save
    photos = json.loads(Path(photos_file).read_text())
    gallery = Gallery(Settings.from_env(home=home))
    done = {person.name for person in gallery.people()}
    # Load both ONNX models now, so the parent's random delays are spent enrolling, not loading.
    parts_of(gallery).pipeline.detector.detect(np.zeros((64, 64, 3), np.uint8))
    parts_of(gallery).pipeline.embedder.embed(np.zeros((112, 112, 3), np.uint8))
    print(f"ready {len(done)}", flush=True)

    with open(log_path, "a", encoding="utf-8") as log:
        for name, path in photos:
            if name in done:
                continue
            try:
                gallery.enroll(path, name, allow_lookalike=True, allow_low_quality=True)
            except MultipleFaces as several:  # not expected for the chosen photos; take the largest face
                largest = max(range(len(several.faces)), key=lambda i: several.faces[i].area)
                gallery.enroll(path, name, face_index=largest, allow_lookalike=True, allow_low_quality=True)
            log.write(name + "\n")
            log.flush()
            os.fsync(log.fileno())
            done.add(name)
    gallery.close()
    print("finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
