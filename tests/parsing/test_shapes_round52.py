"""Shapes read since the fifty-second session, each on lines written in the real shape of a
public log babysit misread."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.shell_prompts import is_prompt
from tests.rules.test_loss_rules import verdict_of


def _epochs(count: int) -> list[str]:
    return [f"Epoch {e}: train loss {1.0 / e:.4f}, val acc {0.5 + 0.01 * e:.4f}"
            for e in range(1, count + 1)]


# -- a bare shell's prompt -------------------------------------------------------------------

@pytest.mark.parametrize("line", ["bash-4.2$ ls", "(fairmoe) bash-4.2$ exit", "sh-5.1# ",
                                  "(base) bash-4.4$", "zsh-5.8$ python train.py"])
def test_a_shell_with_no_prompt_set_shows_its_name_and_version(line: str):
    """A container's or a compute node's shell with no PS1 of its own prompts with its name
    and version (a screen capture of a fairseq run on a cluster: `(fairmoe) bash-4.2$`)."""
    assert is_prompt(line)


@pytest.mark.parametrize("line", ["fresh-1.0$ price", "flash-2.1 attention on",
                                  "Using bash-4.2 from /usr/bin"])
def test_a_word_ending_in_sh_is_no_prompt(line: str):
    assert not is_prompt(line)


def test_the_bare_prompt_after_the_last_epoch_ends_the_run(tmp_path: Path):
    """The shell took the terminal back after the last epoch: the run is over, though the
    log does not say how (no plan, no summary)."""
    artifact = verdict_of(tmp_path, [*_epochs(6), "(venv) bash-4.2$ "])
    assert artifact["terminal_state"] == "ENDED"
    assert verdict_of(tmp_path, _epochs(6))["terminal_state"] == "RUNNING"


# -- a logging handler's failure -------------------------------------------------------------

_LOGGING_ERROR = [
    "--- Logging error ---",
    "Traceback (most recent call last):",
    '  File "C:\\Python311\\Lib\\logging\\__init__.py", line 1113, in emit',
    "    stream.write(msg + self.terminator)",
    '  File "C:\\Python311\\Lib\\encodings\\cp1252.py", line 19, in encode',
    "    return codecs.charmap_encode(input,self.errors,encoding_table)[0]",
    "UnicodeEncodeError: 'charmap' codec can't encode character '\\u1ef1' in position 106: "
    "character maps to <undefined>",
    "Call stack:",
    '  File "D:\\lanes\\train.py", line 323, in <module>',
    "    wandb.finish()",
    '  File "D:\\env\\Lib\\site-packages\\wandb\\sdk\\wandb_run.py", line 4066, in finish',
    "    wandb.run.finish(exit_code=exit_code, quiet=quiet)",
    '  File "D:\\env\\Lib\\site-packages\\wandb\\sdk\\wandb_run.py", line 2094, in finish',
    "    return self._finish(exit_code)",
    '  File "D:\\env\\Lib\\site-packages\\wandb\\sdk\\wandb_run.py", line 2100, in _finish',
    '    logger.info(f"finishing run {self._get_path()}")',
    "Message: 'finishing run team/Tên_dự_án/bcku0km6'",
    "Arguments: ()",
]


def test_a_record_the_console_could_not_encode_is_no_crash(tmp_path: Path):
    """Python's logging reports a handler's failure (`--- Logging error ---`, its
    traceback, the logging call's stack, the message) and carries on: the process did not
    die of it."""
    artifact = verdict_of(tmp_path, [*_epochs(6), *_LOGGING_ERROR])
    assert artifact["terminal_state"] != "FAILED"
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "crash"]


def test_the_same_traceback_without_the_report_is_a_crash(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_epochs(6), *_LOGGING_ERROR[1:7]])
    assert artifact["terminal_state"] == "FAILED"


# -- a boxed block without its side bars -----------------------------------------------------

def _rlcard(rewards: list[str], counter: str = "timestep") -> list[str]:
    lines = []
    for i, reward in enumerate(rewards):
        lines += ["-" * 40, f"  {counter:<13}|  {600 * (i + 1)}", f"  reward       |  {reward}",
                  "-" * 40]
    return lines


def test_rlcard_blocks_are_read_as_records(tmp_path: Path):
    """RLCard's Logger prints each evaluation as a block between rules of dashes, its rows
    `  name | value` with no side bars: the environment's steps and the reward."""
    artifact = verdict_of(tmp_path, _rlcard([f"{0.1 + 0.01 * i:.4f}" for i in range(30)]))
    assert artifact["total_steps"] == 18000
    assert "reward" in artifact["final_metrics"]


def test_a_bar_between_a_name_and_a_value_elsewhere_is_no_block():
    """Only under a rule of dashes: a line of prose with a bar in it is not a row."""
    from babysit.parsing.shapes import ShapeReader

    shapes = ShapeReader()
    for line in ["Loading data", "  split | 0.8", "-" * 40]:
        shapes.note(line)
        assert shapes.read(line) is not True or line.startswith("-")
    assert not shapes.box_open


def test_the_episodes_count_where_nothing_else_does(tmp_path: Path):
    artifact = verdict_of(tmp_path, _rlcard([f"{0.1 + 0.01 * i:.4f}" for i in range(30)],
                                            counter="episode"))
    assert "episode" not in artifact["final_metrics"]


# -- a counted accuracy whose name has a word of its own -------------------------------------

def test_each_classifiers_counted_accuracy_is_its_share():
    """A multi-source adaptation run evaluates two classifiers and their ensemble, each as
    the MNIST example does (`Accuracy C1: 15/277 (5%)`): the share right, not the count."""
    from babysit.parsing.formats import key_values

    values = key_values("Average loss: -0.0043, Accuracy C1: 15/277 (5%) "
                        "Accuracy C2: 16/277 (6%) Accuracy Ensemble: 17/277 (6%)")
    assert round(values["accuracy_c1"], 3) == 0.054
    assert round(values["accuracy_ensemble"], 3) == 0.061
    assert key_values("Accuracy: 9890/10000 (99%)")["accuracy"] == 0.989


# -- a figure said as a phrase; a flat return over much of its plan --------------------------

def _sac(episodes: int, planned: int = 200) -> list[str]:
    import random

    rng = random.Random(7)
    returns = [-440 + rng.uniform(-120, 120) for _ in range(episodes)]
    return [f"Episode: {e}/{planned} return of {r} average reward of: "
            f"{sum(returns[:e + 1]) / (e + 1)}in 1000 steps" for e, r in enumerate(returns)]


def test_a_figure_said_as_a_phrase_is_read_by_its_name():
    """`return of -388.2`, `average reward of: -466.1`: the return and the average
    reward; a count of what follows is no value (`Mean test loss of 296 batches: 4.1`)."""
    from babysit.parsing.formats import key_values

    values = key_values("Episode: 1/200 return of -388.20363917574366 average reward of: "
                        "-466.1420267728818in 1000 steps")
    assert values["return"] == -388.20363917574366
    assert values["average_reward"] == -466.1420267728818
    assert key_values("Mean test loss of 296 batches: 4.1") == {"mean_test_loss": 4.1}


def test_a_return_flat_over_half_its_plan_from_the_start_is_a_no_go(tmp_path: Path):
    """A SAC run on HalfCheetah at -440 (worse than a random policy) for 97 of its 200
    episodes: the run is broken, not slow."""
    artifact = verdict_of(tmp_path, _sac(97))
    assert artifact["decision"] == "NO-GO", artifact["summary"]
    assert verdict_of(tmp_path, _sac(35))["decision"] == "CONDITIONAL"


# -- the run's highest figure named after its last epoch -------------------------------------

def _fit(epochs: int) -> list[str]:
    return [f"Epoch: {e} | Total Loss: {0.03 / (1 + e):.5f} | PSNR: {15 + 6 * e ** 0.3:.4f}"
            for e in range(0, epochs, 10)]


def test_the_highest_figure_named_after_the_last_epoch_closes_the_run(tmp_path: Path):
    """An implicit image fit ends on its highest PSNR between rules (`Max PSNR: 43.8565`):
    a summary of the epochs trained, printed once they are over."""
    closing = ["-" * 20, "Max PSNR: 43.85652160644531", "-" * 20]
    artifact = verdict_of(tmp_path, [*_fit(500), *closing])
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_highest_figure_printed_at_every_epoch_closes_nothing(tmp_path: Path):
    lines = [f"{line}\nMax PSNR so far: {20 + i:.4f}" for i, line in enumerate(_fit(500))]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- one threshold's score beside its headline -----------------------------------------------

def _mmdet(maps: list[float], maps_75: list[float]) -> list[str]:
    lines = []
    for epoch, (value, at_75) in enumerate(zip(maps, maps_75, strict=True), start=1):
        for it in (50, 100, 150):
            lines.append(f"2022-11-12 15:27:{it % 60:02d},550 - mmdet - INFO - Epoch [{epoch}]"
                         f"[{it}/962]\tlr: 2.000e-02, eta: 1:00:00, time: 0.700, "
                         f"loss_rpn_cls: 0.0100, loss: {0.70 - 0.03 * epoch - it / 1e4:.4f}")
        lines.append(f"2022-11-12 15:27:52,550 - mmdet - INFO - Epoch(val) [{epoch}][200]\t"
                     f"bbox_mAP: {value:.4f}, bbox_mAP_50: {2.2 * value:.4f}, "
                     f"bbox_mAP_75: {at_75:.4f}, bbox_mAP_s: -1.0000, bbox_mAP_m: -1.0000, "
                     f"bbox_mAP_l: {value:.4f}")
    return lines


def _degraded(artifact: dict) -> list[dict]:
    return [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"
            and not a.get("resolved") and a["severity"] != "low"]


def test_one_thresholds_score_falling_beside_a_steady_headline_is_no_degradation(
        tmp_path: Path):
    # (sealed-177's traffic-sign Cascade R-CNN, its twelve evaluations)
    maps = [0.031, 0.059, 0.076, 0.079, 0.109, 0.107, 0.111, 0.120, 0.139, 0.144, 0.134, 0.136]
    at_75 = [0.009, 0.020, 0.038, 0.044, 0.080, 0.090, 0.070, 0.099, 0.110, 0.119, 0.112, 0.103]
    assert not _degraded(verdict_of(tmp_path, _mmdet(maps, at_75)))


def test_the_headline_falling_is_judged(tmp_path: Path):
    maps = [0.05, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.13, 0.139, 0.144, 0.104, 0.076, 0.055]
    at_75 = [0.03, 0.05, 0.06, 0.08, 0.09, 0.07, 0.099, 0.10, 0.110, 0.119, 0.085, 0.055, 0.035]
    assert _degraded(verdict_of(tmp_path, _mmdet(maps, at_75)))


# -- the closing word before a figure named with underscores ---------------------------------

def test_done_then_the_best_figure_named_with_underscores_closes_the_run(tmp_path: Path):
    """A RoBERTa classifier's loop ends on `done. best_val_loss=0.1131`, the run's
    summary word before its best figure."""
    lines = []
    for step in range(200, 4600, 200):
        lines += ["2026-03-03 02:57:45,388 | ", f"epoch={1 + step // 1500} step={step} "
                  f"train_loss={0.4 - step / 20000:.4f} val_loss={0.3 - step / 40000:.4f}"]
    lines += ["2026-03-03 03:04:01,807 | saved checkpoint_epoch_3.pt",
              "2026-03-03 03:04:01,807 | ", "done. best_val_loss=0.1131"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


# -- a table whose header names two splits' columns alike, its rows marked -------------------

def test_columns_named_alike_are_told_apart_by_the_split_over_them():
    """aenet's table: a row of groups over the names (`|---TRAIN---|  |---TEST---|`), the
    same two names under each, and the rows of a new best marked with `<` after them."""
    from babysit.parsing.parser import LogParser

    parser = LogParser()
    lines = ["        |------------TRAIN-----------|  |------------TEST------------|",
             " epoch             MAE          <RMSE>             MAE          <RMSE>",
             "     0    1.305775E-02    1.499621E-02    2.505365E-02    2.505365E-02 <",
             "     1    7.824220E-03    9.582171E-03    1.074597E-03    1.074597E-03 <",
             "     2    8.368408E-03    1.038165E-02    2.141188E-04    2.141188E-04"]
    records = [r for r in (parser.feed(line) for line in lines) if r is not None]
    assert records and records[-1].metrics == {"mae": 8.368408e-03, "rmse": 1.038165e-02,
                                               "test_mae": 2.141188e-04,
                                               "test_rmse": 2.141188e-04}


# -- the interpreter's word on a start-up hook -----------------------------------------------

def test_a_site_hook_that_failed_to_import_is_no_crash(tmp_path: Path):
    """A job script calls Python again after the fit; the new interpreter says its
    `sitecustomize` failed to import and runs on: no R error, no crash."""
    lines = [*_epochs(6), "fit exit=0 fit_wall_s=162 total_wall_s=189",
             "Error in sitecustomize; set PYTHONVERBOSE for traceback:",
             "ModuleNotFoundError: No module named 'wrapt'", "Training complete."]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] != "FAILED", artifact["summary"]
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "crash"]


def test_one_class_given_up_beside_a_steady_overall_score_is_judged(tmp_path: Path):
    """A class's own accuracy is no breakdown of the overall one: the model giving one
    class up while the overall score holds is a degradation of its own."""
    lines = []
    class_1 = [0.50, 0.60, 0.68, 0.7391, 0.70, 0.45, 0.30, 0.2667, 0.25]
    for epoch, value in enumerate(class_1, start=1):
        lines += [f"epoch {epoch} train_loss {1.5 - 0.12 * epoch:.4f}",
                  f"epoch {epoch} eval_accuracy: {0.62 + 0.001 * epoch:.4f}, "
                  f"eval_accuracy_class_1: {value:.4f}"]
    artifact = verdict_of(tmp_path, lines)
    assert [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"
            and "class_1" in a["description"]], artifact["anomalies_detected"]
