"""Useful model FLOPs per trained token, given or estimated — with the formula named.

For a decoder-only transformer the usual estimate is 6·N per token for the dense layers
(2·N forward, 4·N backward) plus 12·L·d·T for attention scores and values (L layers,
width d, context T), as in the PaLM paper's appendix. With the parameter count alone,
the attention term is left out and the output says so. Recomputation (activation
checkpointing) is not useful work and is never counted.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlopsPerToken:
    value: float
    formula: str  # how it was obtained, for the report
    leaves_out: str = ""  # what the estimate does not count


def flops_per_token(*, given: float | None, params: float | None, layers: int | None,
                    width: int | None, seq_len: int | None) -> FlopsPerToken | str:
    """The FLOPs per token, or a sentence saying what is missing."""
    if given is not None:
        return FlopsPerToken(given, "given (--flops-per-token)")
    if params is None:
        return ("the FLOPs per token are unknown (pass --flops-per-token, or "
                "--model-params: the log did not print a parameter count)")
    dense = 6.0 * params
    if layers and width and seq_len:
        attention = 12.0 * layers * width * seq_len
        return FlopsPerToken(dense + attention,
                             f"6·N + 12·L·d·T = 6·{params:.4g} + 12·{layers}·{width}·{seq_len}")
    return FlopsPerToken(dense, f"6·N = 6·{params:.4g}",
                         "attention FLOPs (pass --layers, --width and --seq-len to count "
                         "them)")
