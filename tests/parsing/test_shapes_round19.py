"""Shapes read and judgements made since the nineteenth session, each on lines written
in the real shape of a public log."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of

_BLOCKS = "█" * 40


def _experiment(backbone: str, epochs: int = 4) -> list[str]:
    # A script that trains one model after another: a pass over the data under its own
    # bar (longer than an epoch's), then epochs headed `Epoch k/N`, each a `Training:` bar
    # and a summary, then `Training finished` and the model's evaluation table.
    lines = [f"统计类别频率: 100%|{_BLOCKS}| 1464/1464 [00:07<00:00, 205.72it/s]",
             "类别权重: [0.036 0.552 1.854 0.986 1.569]", ""]
    for epoch in range(1, epochs + 1):
        loss = 2.5 - 0.3 * epoch
        lines += [f"Epoch {epoch}/{epochs}", "LR: 0.001",
                  f"Training: 100%|{_BLOCKS}| 183/183 [01:18<00:00,  2.33it/s]",
                  f"Validation: 100%|{_BLOCKS}| 46/46 [00:10<00:00,  4.40it/s]",
                  f"Train Loss: {loss:.4f}, Val Loss: {loss + 0.05:.4f}",
                  "  -> Best model saved", ""]
    return lines + ["Training finished. Total time: 2461.84 seconds", "",
                    f"Backbone: {backbone}", "Class         IoU", "bg         0.8691",
                    "mIoU       0.5442", "Pixel Accuracy: 0.8744"]


def test_a_script_that_trains_one_model_after_another_finishes_with_its_last(tmp_path: Path):
    # The second `Training finished` ends the second experiment, not an epoch: the epoch
    # counter went back to 1 after the first, and the data pass's bar, longer than the
    # training's and drawn again before the second, counts no step and sets no plan.
    data = verdict_of(tmp_path, _experiment("resnet18") + [""] + _experiment("resnet34"))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    assert data["target_steps"] != 1464
    # Cut inside the second experiment, the run is still going.
    data = verdict_of(tmp_path, _experiment("resnet18") + [""] + _experiment("resnet34")[:20])
    assert data["terminal_state"] == "RUNNING", data["summary"]


def _abbreviated(epochs: int, total: int) -> list[str]:
    # A hand loop printing one line an epoch, its counter under a shortened name.
    return [f"E{epoch:>3}/{total} | Loss:{0.9 / epoch:.4f} | TrA:{50 + epoch / 10:.2f}% | "
            f"VAcc:{45 + epoch / 20:.2f}% | ETA:{(total - epoch) * 0.4:.1f}min"
            for epoch in range(1, epochs + 1)]


def test_a_counter_under_its_shortened_name_is_the_run_s_plan(tmp_path: Path):
    data = verdict_of(tmp_path, _abbreviated(120, 120))
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == \
        ("SUCCEEDED", 120, 120), data["summary"]
    data = verdict_of(tmp_path, _abbreviated(80, 120))
    assert (data["terminal_state"], data["target_steps"]) == ("RUNNING", 120), data["summary"]


def test_a_batch_counter_under_its_name_is_no_plan(tmp_path: Path):
    # `Batch 7/7`: the batches of one epoch, whatever name it goes under
    lines = [f"Batch {n}/7 | loss: {1 / n:.3f}" for n in range(1, 8)]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]


def _hapi(epochs: int, planned: int) -> list[str]:
    # paddle.hapi's Model.fit: a bar per epoch, a save, then `Eval begin...` and the
    # evaluation's bar, in the training bar's shape, its loss the evaluation's.
    lines = []
    for epoch in range(1, epochs + 1):
        lines += [f"Epoch {epoch}/{planned}",
                  f"step 20/20 [==============================] - loss: {0.9 / epoch:.4f} - "
                  f"acc: {0.5 + epoch / 100:.4f} - 35ms/step",
                  f"save checkpoint at /home/aistudio/model/{epoch - 1}", "Eval begin...",
                  f"step 4/4 [==============================] - loss: {2.5 + epoch % 2:.4f} - "
                  f"acc: 0.4402 - 13ms/step", "Eval samples: 224", ""]
    return lines


def test_the_bars_after_an_evaluation_begins_are_not_training(tmp_path: Path):
    data = verdict_of(tmp_path, _hapi(30, 100))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert not [a for a in data["anomalies_detected"]
                if a["type"] in ("loss-spike", "divergence", "not-learning")], data["summary"]
    assert data["final_metrics"]["loss"] < 0.05  # the training's loss, not the evaluation's
