"""What a run says about itself once, near its start: how many parameters the model has,
how many tokens one optimizer step trains on (inputs to MFU) and the size of its
vocabulary (ln of it is the loss of a uniform guess). Never metrics."""

from __future__ import annotations

import re

_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_NUMBER = r"(\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([kKmMbBgGtT]?)\b"
# nanoGPT `number of parameters: 10.65M`, Keras `Total params: 124,439,808`, PEFT's
# `all params: 6,742,609,920`, `num_params=1.2e9`, `Model has 124M parameters`.
_PARAMS = re.compile(
    r"(?:number of parameters|total params|all params|num[_ ]params|n_params|"
    r"parameter count)\s*[:=]\s*" + _NUMBER + r"|"
    r"\bhas\s+" + _NUMBER + r"\s+parameters", re.IGNORECASE)
# nanoGPT `tokens per iteration will be: 491,520`; `tokens per step: 524288`.
_TOKENS = re.compile(r"tokens per (?:iteration|iter|step|batch)(?: will be)?\s*[:=]\s*"
                     r"(\d[\d,]*)", re.IGNORECASE)

# Megatron-LM `> padded vocab (size: 50257) with 431 dummy tokens (new size: 50688)` (the
# size before padding), a config dump's `"vocab_size": 32000`, nanoGPT's `found
# vocab_size = 65 (inside data/shakespeare_char/meta.pkl)`, Megatron's argument dump
# `padded_vocab_size ....... 256`.
_VOCAB = re.compile(r"padded vocab \(size:\s*(\d+)|"
                    r"(?:\b|_)vocab(?:ulary)?[_ ]size[\"']?\s*(?:[:=]|\.{3,})\s*(\d+)",
                    re.IGNORECASE)


def _number(text: str, scale: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value * _SCALE[scale.lower()]


def run_facts(line: str) -> dict[str, float]:
    """`model_params` and `tokens_per_step` said by this line (empty when none)."""
    found: dict[str, float] = {}
    params = _PARAMS.search(line)
    if params is not None:
        text, scale = (params.group(1), params.group(2)) if params.group(1) else \
            (params.group(3), params.group(4))
        value = _number(text, scale)
        if value is not None and value >= 1000:  # a model, not a count of tensors
            found["model_params"] = value
    tokens = _TOKENS.search(line)
    if tokens is not None:
        value = _number(tokens.group(1), "")
        if value:
            found["tokens_per_step"] = value
    vocab = _VOCAB.search(line) if "ocab" in line else None
    if vocab is not None:
        value = _number(vocab.group(1) or vocab.group(2), "")
        if value is not None and value >= 2:
            found["vocab_size"] = value
    return found
