"""Shapes read and judged since the thirty-ninth session, each on lines written in the
real shape of a public log (the earlier sets' leftovers, then sealed-118 and sealed-119,
scored blind first)."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of


def _anomalies(artifact: dict) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


# -- An evaluation's loss held to the very value while the training loss moves ---------------


def _triplet(val_losses: list[float], planned: int = 15) -> list[str]:
    lines = []
    for epoch, val in enumerate(val_losses, start=2):
        lines += [f"Epoch {epoch}/{planned}",
                  f"1539/1539 [==============================] - 3427s 2s/step - "
                  f"loss: {0.1902 - epoch * 0.002:.4f} - val_loss: {val:.4f}",
                  "", f"Epoch {epoch:05d}: val_loss did not improve from 0.20000", ""]
    return lines


def test_an_evaluation_loss_held_while_the_loss_moves_is_a_model_that_learns_nothing(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _triplet([0.2] * 7))
    assert ("not-learning", "blocker") in _anomalies(artifact)
    assert artifact["decision"] == "NO-GO"


def test_an_evaluation_loss_that_moves_a_little_is_left_alone(tmp_path: Path):
    artifact = verdict_of(tmp_path, _triplet([0.2, 0.2, 0.1998, 0.2, 0.1995, 0.1993, 0.199]))
    assert "not-learning" not in {kind for kind, _ in _anomalies(artifact)}


def test_an_evaluation_loss_held_on_five_evaluations_is_not_yet_enough(tmp_path: Path):
    artifact = verdict_of(tmp_path, _triplet([0.2] * 5))
    assert "not-learning" not in {kind for kind, _ in _anomalies(artifact)}


# -- A closing sentence well short of the plan: the run is over, not running ------------------


def _keras3(epochs: int, planned: int = 1000, closing: str = "") -> list[str]:
    lines = []
    for epoch in range(1, epochs + 1):
        lines += [f"Epoch {epoch}/{planned}",
                  f"\x1b[1m35/35\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m "
                  f"\x1b[1m3s\x1b[0m 94ms/step - accuracy: {0.6 + epoch / 1000:.4f} - "
                  f"loss: {0.9 - epoch / 1000:.4f} - val_accuracy: 0.7896 - "
                  f"val_loss: {0.5 - epoch / 2000:.4f}"]
    return lines + ([closing] if closing else [])


def test_a_final_figure_far_short_of_the_plan_ends_the_run_unconfirmed(tmp_path: Path):
    artifact = verdict_of(tmp_path, _keras3(
        30, closing="Final validation Mean Intersection Over Union: 47.78%"))
    assert artifact["terminal_state"] == "ENDED"
    assert artifact["decision"] == "CONDITIONAL"


def test_a_periodic_test_line_far_short_of_the_plan_leaves_the_run_running(tmp_path: Path):
    artifact = verdict_of(tmp_path, _keras3(30, closing="Test accuracy: 0.7912"))
    assert artifact["terminal_state"] == "RUNNING"


def test_a_final_figure_at_the_plan_is_the_run_finished(tmp_path: Path):
    artifact = verdict_of(tmp_path, _keras3(
        30, planned=30, closing="Final validation Mean Intersection Over Union: 47.78%"))
    assert artifact["terminal_state"] == "SUCCEEDED"


def _epochs_only(epochs: int, planned: int) -> list[str]:
    return [f"Epoch [{epoch}/{planned}] train loss {1.0 / epoch:.4f}"
            for epoch in range(1, epochs + 1)] + ["Training finished."]


def test_a_sentence_of_the_end_far_short_of_the_epochs_planned_is_no_plan_done(
        tmp_path: Path):
    # (a log whose progress is its epochs: the plan is checked in epochs)
    short = verdict_of(tmp_path, _epochs_only(12, 300))
    assert short["terminal_state"] == "ENDED"
    assert verdict_of(tmp_path, _epochs_only(300, 300))["terminal_state"] == "SUCCEEDED"


# -- A metrics file in long form: a figure a row --------------------------------------------


def _records(lines: list[str]) -> list:
    from babysit.parsing.parser import LogParser
    parser = LogParser()
    return [*parser.feed_lines(lines), *parser.finish()]


def test_a_long_form_metrics_file_is_read_a_figure_a_row():
    lines = []
    for step in (0, 469, 938):
        lines += [f"test_loss,{step},{3.4 / (step + 1):.6f}", f"test_accuracy,{step},0.97",
                  f"test_examples,{step},10000.0"]
    lines.append("test_loss,1407,inf")
    records = [r for r in _records(lines) if r.metrics]
    assert records[0].step == 0 and records[0].metrics == {"test_loss": 3.4}
    assert records[-1].step == 1407 and records[-1].metrics["test_loss"] == float("inf")


def test_a_row_with_more_cells_is_no_long_form():
    assert not [r for r in _records(["epoch,acc,loss", "1,2,0.5,0.4"]) if r.fmt == "long-rows"]


# -- A step counted from 0, told by where each epoch begins ----------------------------------


def _bert_mlm(last_step: int, per_epoch: int = 140, first_epoch: int = 3) -> list[str]:
    total = per_epoch * 10
    return [f"epoch:{step // per_epoch} step:{step}/{total} loss:{3.0 - step / total:.6f}"
            for step in range(first_epoch * per_epoch, last_step + 1)]


def test_steps_and_epochs_counted_from_zero_end_at_the_plan_less_one(tmp_path: Path):
    # (the excerpt begins at epoch 3: step 0 is not in view)
    artifact = verdict_of(tmp_path, _bert_mlm(1399))
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, _bert_mlm(1390))["terminal_state"] == "RUNNING"


def test_steps_counted_from_one_are_not_done_one_short(tmp_path: Path):
    lines = [f"epoch:{1 + (step - 1) // 140} step:{step}/1400 loss:{3.0 - step / 1400:.6f}"
             for step in range(421, 1400)]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- A skipped update's non-finite figure in brackets -----------------------------------------


def test_a_gradient_norm_in_brackets_on_a_skipped_update_is_no_figure_of_the_training():
    # (a SimVP trainer's log: two skips an epoch under AMP, its epoch lines after them; a
    # finite norm above the guard's bound now and then, which teaches the line's shape)
    lines = ["2026-04-22 10:28:06,775 - Optimizer | lr=0.000100 | amp=True | grad_guard=10.0"]
    for epoch in range(1, 8):
        norm = "13.182616" if epoch % 3 == 0 else "inf"
        lines += [f"2026-04-22 1{epoch}:13:5{epoch},679 - ⚠️ Abnormal GradNorm ({norm}), "
                  f"skipping step",
                  f"2026-04-22 1{epoch}:14:5{epoch},909 - ⚠️ Abnormal GradNorm (inf), "
                  f"skipping step",
                  f"2026-04-22 1{epoch}:32:04,667 - Ep {epoch} | Loss: "
                  f"{0.217 - epoch / 100:.4f} | CSI-M: 0.4328 | Skip(loss/grad): 0/2 | "
                  f"LR: 6.347947e-06"]
    records = _records(lines)
    assert [r.metrics["loss"] for r in records if "loss" in r.metrics][-1] == 0.147
    assert all(all(v == v and abs(v) != float("inf") for v in r.metrics.values())
               for r in records)


def test_an_epochs_closing_record_numbered_as_that_epoch_is_no_step_from_zero(
        tmp_path: Path):
    # (Keras numbers the record that ends an epoch with that epoch, at step epoch × K: a
    # log cut one batch short of its last epoch's end is not finished)
    cut = ("\x1b[1m34/35\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m━\x1b[0m "
           "\x1b[1m0s\x1b[0m 94ms/step - accuracy: 0.6290 - loss: 0.8710")
    lines = [*_keras3(29, planned=30), "Epoch 30/30", cut]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"
