"""Fuzzing the outbound pass (babysit.sanitise + babysit.redact): whatever text comes
from outside, it never raises, never lets a terminal control through, and never lets a
planted secret through when the secret stands as its own word."""

from __future__ import annotations

import random
import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from babysit.redact import scrub
from babysit.sanitise import outbound, sanitise

_ACTIVE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
SECRETS = ["hf_Q2w3E4r5T6y7U8i9O0pA", "ghp_abcdefghijklmnopqrstuvwxyz0123",
           "AKIAIOSFODNN7EXAMPLE", "sk-abcdefghijklmnopqrstuvwx"]
_VOCAB = ["a", "=", ":", " ", "\"", "'", "\\", "/", "@", "://", "token", "password",
          "Bearer", "bearer", "key", "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----",
          "\x1b", "\x1b[", "\x1b]", "\x07", "\x9b", "\x9d", "\x9c", "\n", "\r", "\t",
          "\u202e", "\u2066", "AccountKey", ";", "{", "}", "0", "9f", "Ab1/", *SECRETS]
_TEXT = st.lists(st.one_of(st.sampled_from(_VOCAB), st.text(max_size=8)), max_size=40).map(
    "".join)
_SETTINGS = settings(max_examples=400, deadline=None, database=None,
                     suppress_health_check=[HealthCheck.too_slow])


def check(text: str) -> None:
    shown = outbound(text)
    assert _ACTIVE.search(shown) is None, repr(shown)
    assert sanitise(sanitise(text)) == sanitise(text)


@_SETTINGS
@given(_TEXT)
def test_outbound_never_raises_nor_lets_control_through(text: str):
    check(text)


@_SETTINGS
@given(_TEXT, st.sampled_from(SECRETS), _TEXT)
def test_a_secret_standing_as_a_word_never_passes(before: str, secret: str, after: str):
    assume(secret not in before and secret not in after)  # only the one planted as a word
    shown = scrub(f"{before} {secret} {after}")
    assert secret not in shown, shown


def test_seeded_sweep():
    rng = random.Random(20261201)
    for index in range(3000):
        text = "".join(rng.choice(_VOCAB) for _ in range(rng.randint(0, 60)))
        try:
            check(text)
        except AssertionError as error:  # name the case so it can be replayed
            raise AssertionError(f"sweep case {index}: {text!r}") from error
