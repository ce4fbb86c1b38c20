"""The threshold for pooled evidence: a track's pooled embedding is decided on the same score as a photo's face,
at the threshold the policy sets for the gallery (`facerec.openset.threshold_policy`) plus a calibrated `shift`.

Why a shift: pooling views of one face averages its noise away, so a stranger's pooled embedding may sit closer to
(or farther from) the enrolled faces it resembles than any one of its frames, and the model card's FAR(t) was
measured on single photos. `scripts/calibrate_video.py` measures it on the calibration identities the card's curve
comes from (held out from training, never LFW): each held-out photo made into a synthetic track (views as a video
gives them: shifted, blurred, smaller, darker) and, separately, several photos of one person pooled (the most
independent views a track can have); both scored against every other held-out person's photos with the same
cohort-normalised score. At each false-accept rate of the grid (`FAR_GRID`, where the held-out stranger pairs
measure it), the pooled scores' quantile minus the single photos' is the shift that rate needs; the file keeps the
largest over the grid and both kinds of pool (`shift_for`), never below 0: at the threshold plus the shift, a
stranger's track is named no more often than a stranger's photo at the threshold. Below the grid's smallest rate
(large galleries) the same shift is assumed, which `benchmarks/video_open_set.py` checks on LFW's one-photo people.

The file sits next to the model (`<model>.video.json`) and names the model it was measured for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FAR_GRID = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4)
CALIBRATE = "run scripts/calibrate_video.py for this model"


@dataclass(frozen=True)
class PooledCalibration:
    """`shift`: score units a track's threshold is above a photo's; `warning` when the file is missing or was made
    for another model (a shift of 0 is then used: a photo's threshold, not checked for pooled evidence)."""

    shift: float
    model_sha256: str = ""
    source: dict = field(default_factory=dict)
    warning: str | None = None

    @classmethod
    def load(cls, path: str | Path, model_sha256: str | None = None) -> "PooledCalibration":
        try:
            data = json.loads(Path(path).read_text())
            shift, made_for = float(data["shift"]), str(data.get("model_sha256", ""))
        except (OSError, ValueError, KeyError, TypeError):
            return cls(0.0, warning=f"tracks are decided at a photo's threshold: no calibration for pooled evidence "
                                    f"beside the model ({Path(path).name}); {CALIBRATE}")
        if model_sha256 and made_for and made_for != model_sha256:
            return cls(0.0, made_for, dict(data.get("source", {})),
                       f"the calibration for pooled evidence was made for another model file; tracks are decided at "
                       f"a photo's threshold; {CALIBRATE}")
        return cls(max(shift, 0.0), made_for, dict(data.get("source", {})))


def shift_for(single: np.ndarray, pooled: np.ndarray, fars=FAR_GRID) -> tuple[float, list[dict]]:
    """The score shift that keeps pooled strangers' false-accept rate at or below single photos' over `fars`:
    max over the grid of (pooled quantile - single quantile) at 1 - far, and 0 at least. `single`, `pooled`:
    stranger scores (any shapes). Returns (shift, one row per rate: far, single, pooled, shift)."""
    single, pooled = np.ravel(single), np.ravel(pooled)
    rows = []
    for far in fars:
        a, b = float(np.quantile(single, 1 - far)), float(np.quantile(pooled, 1 - far))
        rows.append({"far": far, "single": round(a, 4), "pooled": round(b, 4), "shift": round(b - a, 4)})
    return max(0.0, max(row["shift"] for row in rows)), rows
