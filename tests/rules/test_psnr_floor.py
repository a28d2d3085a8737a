"""A PSNR below 10 dB, what a flat grey picture scores, on many points in a row: the image
model reconstructs nothing (issue 24). Shape: sealed-15's learned image codec, `[ep 40
step 10440 t= 19788s vram= 5904MB] L=0.3579  D=0.3551  PSNR= 4.50  R=0.2164 bpp`, which
stops itself at its time budget."""

from __future__ import annotations

from pathlib import Path

from babysit.rules.psnr_floor import psnr_keys
from tests.rules.test_loss_rules import verdict_of


def codec(psnrs: list[float]) -> list[str]:
    lines = []
    for i, p in enumerate(psnrs):
        d = 10 ** (-p / 10)
        lines.append(f"[ep {i // 13} step {20 * i:5d} t={38 * i + 5:7d}s vram= 5904MB] "
                     f"L={d + 0.003:.4f}  D={d:.4f}  PSNR={p:5.2f}  R=0.{2200 + i % 7} bpp")
    return [*lines, "reached --max-seconds 1200, stopping",
            f"saved checkpoints/base.pt (epoch 3, step {20 * len(psnrs)})"]


def test_a_finished_run_whose_psnr_stayed_near_4_db_is_a_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, codec([9.5, 9.8] + [3.3 + 0.2 * (i % 6) for i in range(40)]))
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker", found
    assert "psnr" in found[0]["description"]
    assert data["terminal_state"] == "SUCCEEDED" and data["decision"] == "NO-GO"


def test_a_psnr_that_climbs_past_the_floor_withdraws_it(tmp_path: Path):
    data = verdict_of(tmp_path, codec([6.0 + 0.1 * i for i in range(25)]
                                      + [24.0 + 0.1 * (i % 5) for i in range(20)]))
    open_ones = [a for a in data["anomalies_detected"]
                 if a["type"] == "not-learning" and "resolved:" not in a["description"]]
    assert open_ones == [] and data["decision"] == "GO"


def test_only_a_measured_psnr_is_judged():
    assert psnr_keys(("psnr", "val/PSNR_Y", "best_psnr", "psnr_gain", "loss")) == (
        "psnr", "val/PSNR_Y")
