"""A finished run is GO only when its log shows it learned something: a held-out score
at its floor on every evaluation it made is no result, however few they were; a log
with no figure of learning at all (only a bar counting its steps) says so."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of

_HEADER = ("               Class     Images     Labels          P          R     mAP@.5 "
           "mAP@.5:.95: 100%|██████████| 56/56 [00:28<00:00,  1.98it/s]")


def _yolo_run(maps: list[float]) -> list[str]:
    lines = ["Starting training for 2 epochs...", "",
             "     Epoch   gpu_mem       box       obj       cls    labels  img_size"]
    for epoch, value in enumerate(maps):
        lines += [f"       {epoch}/{len(maps) - 1}     3.19G    {0.158 - epoch * 0.005:.4g}"
                  f"  0.007039   0.04377        11       128: 100%|██████████| 500/500 "
                  f"[03:10<00:00,  2.62it/s]", _HEADER,
                  f"                 all       5297      59814      0.141    0.00838    "
                  f"{value}   0.000472", "",
                  "     Epoch   gpu_mem       box       obj       cls    labels  img_size"]
    return [*lines[:-1], f"{len(maps)} epochs completed in 0.127 hours.", ""]


def test_a_finished_detector_whose_map_never_left_its_floor_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, _yolo_run([0.00246, 0.00291]))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO")
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               for a in data["anomalies_detected"])


def test_a_finished_detector_that_left_its_floor_is_go(tmp_path: Path):
    data = verdict_of(tmp_path, _yolo_run([0.00246, 0.231]))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")


def test_a_finished_run_that_shows_only_its_steps_says_so(tmp_path: Path):
    # COSCI-GAN's log (sealed-26): one bar to its total, nothing measured. Its end is
    # confirmed and nothing went wrong that the log shows: GO, at low confidence, with
    # a finding that says what the log does not show.
    frames = [f"{100 * n // 400:3d}%|{'█' * (n // 40):<10}| {n}/400 [00:{n // 10:02d}<00:00, "
              f"10.1it/s]" for n in range(0, 401, 8)]
    data = verdict_of(tmp_path, ["\r".join(frames)])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")
    assert data["confidence"] == "low"
    assert any(f["title"] == "no measure of learning in the log" and f["severity"] == "medium"
               for f in data["findings"])
