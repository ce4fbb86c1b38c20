"""What processor this is, in the terms that change facerec's answers or speed.

int8 kernels behave differently with and without VNNI (`facerec.faces.embedder_check`), bf16 training pays only with
native bf16 (`facerec.train.precision`), and every published figure names the CPU it was measured on
(`facerec.provenance`): all three read the same few flags from here.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

# The instruction sets that matter to onnxruntime's int8 and fp32 kernels and to bf16 training.
RELEVANT_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16",
                  "amx_int8")


@dataclass(frozen=True)
class CpuDescription:
    """The processor's model name, which of RELEVANT_FLAGS it has, and how many cores this process may use."""

    model: str
    flags: tuple[str, ...]
    cores: int

    def has(self, flag: str) -> bool:
        return flag in self.flags

    @property
    def int8_dot_product(self) -> str:
        """Which int8 dot-product instructions onnxruntime's fused kernels will use here."""
        if self.has("amx_int8"):
            return "AMX"
        if self.has("avx512_vnni") or self.has("avx_vnni"):
            return "VNNI"
        return "no VNNI (16-bit pair sums)"

    def summary(self) -> str:
        """One line: 'Intel Xeon ... [avx2 fma avx512f ...], 2 cores'."""
        return f"{self.model} [{' '.join(self.flags) or 'none of ' + ' '.join(RELEVANT_FLAGS)}], {self.cores} cores"

    def to_dict(self) -> dict:
        return {"model": self.model, "flags": list(self.flags), "cores": self.cores,
                "int8_dot_product": self.int8_dot_product}


def describe_cpu(cpuinfo: str | None = None) -> CpuDescription:
    """This machine's CPU from /proc/cpuinfo (or the given text); on systems without it, what `platform` says."""
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text() if path.exists() else ""
    model, flags = platform.processor() or platform.machine(), set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            model = value.strip()
        elif key.strip() in ("flags", "Features"):
            flags.update(value.split())
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return CpuDescription(model, tuple(flag for flag in RELEVANT_FLAGS if flag in flags), cores)
