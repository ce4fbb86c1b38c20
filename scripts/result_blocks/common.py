"""What every table shares: reading a results file, and naming the CPU and the model it was measured on."""

from __future__ import annotations

import functools
import json
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


RESULTS = ROOT / "benchmarks" / "results"


CARD = ROOT / "models" / "facerec-r18-arcface.json"


PEER_REFERENCE = {"one_shot": 0.933, "distractors": 0.874, "pairs": 0.989}  # face_recognition as this project measured it in an
# earlier run (not dlib's own publication, which gives 99.38% on LFW pairs)


def load(name: str) -> dict:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def cpu_text(result: dict) -> str:
    record = result.get("provenance") or {}
    cpu = record.get("cpu") or {}
    if not cpu:
        return "not recorded"
    if not cpu.get("flags"):  # no flags recorded: say nothing about them (never a guessed "no AVX2")
        return cpu["model"]
    flags = [f for f in cpu["flags"] if f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")]
    return f"{cpu['model']} ({', '.join(flags) or 'none of avx2, avx512f, avx512_vnni, avx_vnni, amx_int8'})"


def model_text(result: dict) -> str:
    """The model a result was measured with, said to be an earlier one when it is not the shipped file."""
    sha = (result.get("provenance") or {}).get("model_sha256")
    if not sha:
        return "not recorded"
    return f"`{sha[:12]}`" + ("" if sha == shipped_sha256() else " (an earlier model, not the shipped one)")


@functools.lru_cache(maxsize=1)
def shipped_sha256() -> str:
    from facerec.provenance import file_sha256

    return file_sha256(CARD.with_suffix(".onnx"))


def defined(value) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def figure(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def ratio(ratio, peer: dict) -> str:
    if ratio is None:
        return "–"
    ms = (peer["facerec"]["ms_per_face_embed"], peer["face_recognition"]["ms_per_face_embed"])
    return f"**{ratio:.2f}x** ({ms[0]:.1f} vs {ms[1]:.1f} ms per face)"
