"""Shapes read and judgements made since the eighteenth session, each on lines written
in the real shape of a public log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from babysit.config import PollSettings, RuleSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.model import Severity
from babysit.parsing.formats import parse_hf_dict
from babysit.parsing.loop_over import says_saved
from babysit.parsing.parser import LogParser
from babysit.parsing.plan import target_in
from babysit.rules.learning_rules import NotLearningRule
from babysit.rules.signals import Observation, Raise
from babysit.targets.common.log_file import LocalLogTarget
from tests.conftest import FakeClock, artifact_in
from tests.rules.test_loss_rules import verdict_of


def _verdict_unterminated(tmp_path: Path, lines: list[str]) -> dict[str, Any]:
    """`verdict_of`, for a log whose last line has no newline (a script's last print
    as it left the file)."""
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines))
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), once=True), out_dir=tmp_path),
                NullObserver(), clock=FakeClock())
    return artifact_in(tmp_path)


def _pan(epochs: int, last_epoch_prints: int = 4, floor: float = 0.0) -> list[str]:
    # PaddleOCR's PAN: an epoch header, then a record every 20 batches of 62 (the last
    # print at 61/62), the learning rate decaying polynomially to 0 at the plan's end.
    lines = [f"Namespace(arch='resnet50', batch_size=16, n_epoch={epochs})"]
    total = epochs * 62
    for epoch in range(1, epochs + 1):
        lines += ["", f"Epoch: [{epoch} | {epochs}]"]
        prints = last_epoch_prints if epoch == epochs else 4
        for batch in (1, 21, 41, 61)[:prints]:
            done = (epoch - 1) * 62 + batch
            lr = 0.001 * (1 - (done + 1) / total) ** 0.9
            loss = 0.5 / (1 + done / 50)
            lines.append(f"({batch}/62) LR: {max(lr, floor):.6f} | Batch: 1.824s | Total: 2min | "
                         f"ETA: 0min | Loss: {loss:.3f} | IoU(text/kernel): 0.952/0.876 ")
    return lines


def test_an_epoch_stopped_where_every_epoch_printed_its_last_is_over(tmp_path: Path):
    data = verdict_of(tmp_path, _pan(12))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    # part-way through the last epoch's prints (41/62, where the others went on to 61),
    # nothing says the epoch is over
    data = verdict_of(tmp_path, _pan(12, last_epoch_prints=3))
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]
    # at that print with a rate still well above its end (a schedule that is no decay to
    # the plan's end), the log may stop a batch before the run does
    data = verdict_of(tmp_path, _pan(12, floor=0.0005))
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]


def _bare_loop(epochs: int, tail: list[str]) -> list[str]:
    # A bare print loop over a time series: one line an epoch, from 0, no plan printed.
    lines = [f"epoch: {e}  loss: {168.5 / (1 + e) ** 0.8:.7g}  time: 22.3{e % 10} s"
             for e in range(epochs)]
    return lines + tail


def test_a_loop_stopped_at_a_round_count_then_its_model_saved_finished(tmp_path: Path):
    tail = ["", "", "", "saved model mse loss: 0.08406433"]
    data = verdict_of(tmp_path, _bare_loop(200, tail))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    # so when that last line has no newline (read after the rest, as the file ends)
    data = _verdict_unterminated(tmp_path, _bare_loop(200, tail))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    # the round count alone says only that the loop is over
    data = verdict_of(tmp_path, _bare_loop(200, []))
    assert data["terminal_state"] == "ENDED", data["summary"]
    # and a save after a count no plan names is no more than the loop over
    data = verdict_of(tmp_path, _bare_loop(187, ["saved model mse loss: 0.08406433"]))
    assert data["terminal_state"] == "ENDED", data["summary"]


def test_a_saved_model_line_is_the_record_only_where_every_record_says_so():
    assert says_saved("saved model mse loss: 0.08406433")
    assert says_saved("Model saved, best acc 0.91")
    assert not says_saved("epoch 3 loss 0.2 (model saved)")
    # faceswap's loop prints its losses on the save line itself, every time
    faceswap = [f"saved model weights loss_A: {0.2 - i / 100:.5f}, loss_B: {0.15 - i / 200:.5f}"
                for i in range(12)]
    records = LogParser().feed_lines(faceswap)
    assert len([r for r in records if r.metrics]) == 12
    assert max(r.step or 0 for r in records) == 12


def test_a_dict_its_line_calls_a_configuration_is_no_record():
    assert parse_hf_dict("[main.py][line:127][INFO] Config:{'feat_dim': 512, 'dropout': 0.6, "
                         "'train_bs': 128, 'lr': 0.001}") is None
    assert parse_hf_dict("INFO - Configurando LoRA: {'lora_alpha': 16, 'lora_dropout': 0.1, "
                         "'r': 16,...") is None
    # names and flags among the numbers: a configuration however it is introduced
    assert parse_hf_dict("{'feat_dim': 512, 'device': 'cuda:4', 'load_ckpt': False, "
                         "'dataset': 'ucf-crime', 'lr': 0.001}") is None
    # a metric dict, one word among its numbers, stays a record
    parsed = parse_hf_dict("{'loss': 0.4123, 'learning_rate': 2e-05, 'epoch': 0.5, "
                           "'phase': 'train'}")
    assert parsed is not None and parsed.metrics["loss"] == 0.4123


def test_a_configurations_total_of_steps_alone_on_its_line_is_the_plan():
    assert target_in("  total_pseudo_env_action_steps: 2304") == 2304
    assert target_in("total_timesteps: 100000") == 100000
    # a part of the run's, or a progress line's, is not
    for line in ("  total_warmup_steps: 500", "  total_eval_steps: 40",
                 "total_timesteps: 2304 fps: 103", "|    total_timesteps      | 2304  |"):
        assert target_in(line) is None, line


def _replayed(rule: NotLearningRule, epochs: int, per_epoch: int, frozen_from: int) -> list:
    # Lightning's bar: a record every batch, its epoch fractional; the losses of each
    # epoch from `frozen_from` on are the epoch before's, batch for batch.
    pattern = [-0.45, -0.431, -0.419, -0.444, -0.388, -0.475, -0.406, -0.45, -0.363]
    out = []
    for step in range(1, epochs * per_epoch + 1):
        epoch, batch = divmod(step, per_epoch)
        loss = pattern[batch % len(pattern)]
        if epoch < frozen_from:
            loss += 0.001 * ((step * 7919) % 13 - 6)  # still moving in its last digit
        out += rule.observe(Observation(step=step, metrics={"loss": round(loss, 3)},
                                        loss=round(loss, 3), epoch=step / per_epoch))
    return [s for s in out if isinstance(s, Raise) and s.key == "replayed-epoch"]


def test_an_epoch_that_replays_the_one_before_loss_for_loss_is_not_learning():
    raised = _replayed(NotLearningRule(RuleSettings()), 4, 200, frozen_from=1)
    assert len(raised) == 1 and raised[0].severity is Severity.BLOCKER
    assert "200 steps earlier" in raised[0].description
    # epochs whose losses differ (the weights moved) are no such finding
    assert _replayed(NotLearningRule(RuleSettings()), 4, 200, frozen_from=9) == []


def _meshgpt(epochs: int, planned: int) -> list[str]:
    # A hand-written loop: each step line names its epoch alone, the fields set apart by
    # `|`; the epoch's total shows only on its summary, printed once the epoch is over.
    lines = []
    for e in range(1, epochs + 1):
        lines += [f"Epoch {e} | Step {s}/2449 | Loss: {0.07 / e + s * 1e-6:.6f} "
                  f"(Chamfer=0.001679, Repulse=0.118650)" for s in range(20, 2449, 20)]
        lines.append(f"==> Epoch {e}/{planned} | Avg Loss: {0.07 / e:.6f}")
    return lines


def test_an_epoch_named_alone_before_its_fields_then_summed_up_at_the_plan_ends_it(
        tmp_path: Path):
    data = verdict_of(tmp_path, _meshgpt(6, 6))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    data = verdict_of(tmp_path, _meshgpt(5, 6))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def _keras_fit(epochs: int, planned: int, tail: list[str]) -> list[str]:
    # Keras' `verbose=1` bars, one an epoch, then what the script prints after `fit`.
    lines = []
    for e in range(1, epochs + 1):
        lines += [f"Epoch {e}/{planned}",
                  f"69/69 [==============================] - 2s 22ms/step - loss: "
                  f"{5757 / e:.4f} - val_loss: {3452 / e:.4f}"]
    return lines + tail


def test_figures_under_new_names_after_a_fit_stopped_short_say_it_is_over(tmp_path: Path):
    # sealed-27's engine RUL model: a silent early stop at epoch 37 of 100, then the
    # script's own evaluation under names no epoch printed
    data = verdict_of(tmp_path, _keras_fit(37, 100, ["The MSE is 326.19, the RMSE is 18.06."]))
    assert data["terminal_state"] == "ENDED", data["summary"]
    assert "The MSE is 326.19" in data["summary"]
    # a save alone is no such evidence (a run saves its best model whenever it improves)
    data = verdict_of(tmp_path, _keras_fit(37, 100, ["Saving model to model.h5"]))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_paddles_high_level_bar_under_its_epoch_header_counts_the_plan(tmp_path: Path):
    # paddle.hapi's ProgBarLogger: `step 1/1 [====] - loss: … - 35ms/step` under `Epoch
    # 1154/5000`: the bar counts the epoch's batches, the header the plan.
    lines = []
    for e in (1153, 1154):
        lines += [f"Epoch {e}/5000",
                  "step 1/1 [==============================] - loss: 0.1624 - acc: 0.1071 "
                  "- 35ms/step",
                  f"save checkpoint at /home/aistudio/Model_cy_pp/{e - 1}"]
    records = [r for r in LogParser().feed_lines(lines) if r.metrics]
    assert [(r.step, r.target_steps) for r in records] == [(1153, 5000), (1154, 5000)]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_traceback_closed_by_an_exception_of_any_name_is_a_crash(tmp_path: Path):
    # torch.compile without Triton: the class's name ends in no `Error`
    lines = ["step 1 loss 2.3", "step 2 loss 2.2", "Traceback (most recent call last):",
             '  File "train.py", line 559, in <module>', "    loss = model(x, y)",
             '  File "torch/_inductor/scheduler.py", line 5433, in create_backend',
             "    raise TritonMissing(inspect.currentframe())",
             "torch._inductor.exc.TritonMissing: Cannot find a working triton installation."]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO"), data["summary"]
    assert "TritonMissing" in data["summary"]


def test_a_step_assigned_its_count_of_a_total_names_the_plan(tmp_path: Path):
    # a hand-written logger: `[train] epoch=5 step=320/320 loss=29.6578`
    lines = [f"[train] epoch={1 + s // 64} step={s}/320 loss={2330 / s:.4f}"
             for s in (1, *range(10, 321, 10))]
    records = [r for r in LogParser().feed_lines(lines) if r.metrics]
    assert (records[-1].step, records[-1].target_steps) == (320, 320)
    data = verdict_of(tmp_path, [*lines, "[done] Saved adapter weights as 'claim-extractor'"])
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
