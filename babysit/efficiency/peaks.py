"""Dense peak throughput of common accelerators, per precision, in TFLOP/s.

Dense means without 2:4 structured sparsity: datasheets often lead with the sparse
figure, which is twice the dense one and which training never reaches. Each entry names
where its figures come from. A GPU or precision not in the table gives no peak — the
user passes `--peak-tflops` — rather than a guess.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    gpu: str
    precision: str
    tflops: float
    source: str


_A100 = "NVIDIA A100 Tensor Core GPU datasheet (dense figures)"
_H100 = "NVIDIA H100 Tensor Core GPU datasheet (dense = the sparse figure / 2)"
_H200 = "NVIDIA H200 Tensor Core GPU datasheet (SXM; dense = the sparse figure / 2)"
_B200 = "NVIDIA HGX B200 datasheet, per GPU (dense = the sparse figure / 2)"
_L4 = "NVIDIA L4 Tensor Core GPU datasheet (dense = the sparse figure / 2)"
_A10 = "NVIDIA A10 Tensor Core GPU datasheet (dense = the sparse figure / 2)"
_V100 = "NVIDIA V100 Tensor Core GPU datasheet (SXM2)"
_T4 = "NVIDIA T4 Tensor Core GPU datasheet"

# gpu → precision → (TFLOP/s, source)
_TABLE: dict[str, dict[str, tuple[float, str]]] = {
    "a100": {"fp32": (19.5, _A100), "tf32": (156.0, _A100), "bf16": (312.0, _A100),
             "fp16": (312.0, _A100)},
    "h100-sxm": {"fp32": (67.0, _H100), "tf32": (494.5, _H100), "bf16": (989.5, _H100),
                 "fp16": (989.5, _H100), "fp8": (1979.0, _H100)},
    "h100-pcie": {"fp32": (51.0, _H100), "tf32": (378.0, _H100), "bf16": (756.0, _H100),
                  "fp16": (756.0, _H100), "fp8": (1513.0, _H100)},
    "h200": {"fp32": (67.0, _H200), "tf32": (494.5, _H200), "bf16": (989.5, _H200),
             "fp16": (989.5, _H200), "fp8": (1979.0, _H200)},
    "b200": {"tf32": (1100.0, _B200), "bf16": (2250.0, _B200), "fp16": (2250.0, _B200),
             "fp8": (4500.0, _B200)},
    "l4": {"fp32": (30.3, _L4), "tf32": (60.0, _L4), "bf16": (121.0, _L4),
           "fp16": (121.0, _L4), "fp8": (242.5, _L4)},
    "a10": {"fp32": (31.2, _A10), "tf32": (62.5, _A10), "bf16": (125.0, _A10),
            "fp16": (125.0, _A10)},
    "v100": {"fp32": (15.7, _V100), "fp16": (125.0, _V100)},
    "t4": {"fp32": (8.1, _T4), "fp16": (65.0, _T4)},
}
_ALIASES = {"a100-sxm": "a100", "a100-pcie": "a100", "a100-80gb": "a100", "a100-40gb": "a100",
            "h100": "h100-sxm", "h200-sxm": "h200", "v100-sxm2": "v100"}
# Known by name, but no datasheet figure to trust: say so instead of guessing.
_UNPUBLISHED = {"a10g": "NVIDIA publishes no tensor-core figure for the A10G (an AWS part "
                        "clocked below the A10)"}
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")


def known_gpus() -> list[str]:
    return sorted(_TABLE)


def normalise_gpu(name: str) -> str:
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = key.removeprefix("nvidia-").removeprefix("tesla-")
    return _ALIASES.get(key, key)


def peak_for(gpu: str, precision: str) -> Peak | str:
    """The dense peak, or a sentence saying why there is none."""
    key = normalise_gpu(gpu)
    if key in _UNPUBLISHED:
        return f"{_UNPUBLISHED[key]}: pass --peak-tflops"
    table = _TABLE.get(key)
    if table is None:
        return (f"no peak known for GPU {gpu!r} (known: {', '.join(known_gpus())}): pass "
                f"--peak-tflops")
    entry = table.get(precision)
    if entry is None:
        return (f"no {precision} peak for {key} (known: {', '.join(table)}): pass "
                f"--peak-tflops")
    return Peak(key, precision, entry[0], entry[1])
