"""Shapes read and judged since the forty-first session, each on lines written in the real
shape of a public log (sealed-123's leftovers, then sealed-124 and sealed-125, scored blind
first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.events import EventKind, find_events
from tests.rules.test_loss_rules import verdict_of


def _open(artifact: dict) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


# -- A FATAL line of glog, absl or TensorFlow's C++ logger ends the process ------------------

def test_a_fatal_line_of_tensorflows_cpp_logger_is_the_runs_end():
    line = ("2021-08-19 02:10:50.224348: F tf_adapter/kernels/geop_npu.cc:766] "
            "GeOp3_0GEOP::::DoRunAsync Failed")
    [event] = find_events(line)
    assert (event.kind, event.detail) == (EventKind.EXCEPTION, "GeOp3_0GEOP::::DoRunAsync Failed")


def test_a_glog_fatal_line_is_the_runs_end_whatever_its_message():
    line = "F1114 09:23:21.224201 31685 solver.cpp:91] Unknown solver type: Adamx"
    [event] = find_events(line)
    assert event.kind is EventKind.EXCEPTION
    assert event.detail == "Unknown solver type: Adamx"


def test_glogs_other_levels_and_a_capital_f_word_are_no_failure():
    for line in ("2021-08-19 02:10:44.726729: W tensorflow/core/framework/op_kernel.cc:1639] "
                 "Unavailable: Internal errors",
                 "I0524 19:24:23.882612 13813 solver.cpp:486] Iteration 150000, lr = 0.01",
                 "Fold: F 3 of 5 started", "F1 score: 0.82"):
        assert not [e for e in find_events(line) if e.kind is EventKind.EXCEPTION], line


def test_a_run_that_dies_on_a_fatal_tensorflow_line_is_a_crash(tmp_path: Path):
    # the Ascend port of PoseFix: iterations at 0.12 s each, then the adapter's fatal
    # line and the multiprocessing tracker's shutdown warning; no traceback
    lines = [f"\x1b[92m08-19 02:10:{40 + i // 10:02d}\x1b[0m Epoch 0 itr {3700 + i}/9364: "
             f"lr: 5e-05 speed: 0.12(0.08s r0.04)s/itr 0.32h/epoch loss_h: "
             f"{2.9 - i * 0.002:.4f} loss_c: {1.4 - i * 0.001:.4f}" for i in range(60)]
    lines += ["2021-08-19 02:10:45.726729: W tensorflow/core/framework/op_kernel.cc:1639] "
              "Unavailable: Internal errors",
              "2021-08-19 02:10:50.224348: F tf_adapter/kernels/geop_npu.cc:766] "
              "GeOp3_0GEOP::::DoRunAsync Failed",
              "Error Message is : ", "E19999: Inner Error!",
              "        Unknown error occurred. Please check the log.", "",
              "/usr/local/lib/python3.7/multiprocessing/semaphore_tracker.py:144: UserWarning: "
              "semaphore_tracker: There appear to be 91 leaked semaphores to clean up at shutdown",
              "  len(cache))"]
    artifact = verdict_of(tmp_path, lines)
    assert ("crash", "blocker") in _open(artifact)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")


# -- The tutorial's `[epoch, batch]` pairs, and a test line per epoch opening on `[e / E]` --

def _mps_loop(epochs: int, planned: int = 10) -> list[str]:
    # a loop grown from PyTorch's CIFAR-10 tutorial, on Apple's MPS: `[7,   600]: loss:
    # 0.047 , acc: 98.54 , time: 0.00250 % ` every 300 batches, then the epoch's test
    lines = []
    for epoch in range(1, epochs + 1):
        for batch in (300, 600, 900):
            lines.append(f"[{epoch}, {batch:5d}]: loss: {0.8 / (epoch + batch / 300):.3f} , "
                         f"acc: {90 + epoch * 0.8:.2f} , time: 0.00250 % ")
        lines.append(f"[{epoch} / {planned}]: Accuracy on test set: {96 + epoch * 0.2:.1f} % ")
    return lines


def test_the_tutorials_pairs_with_a_colon_are_its_epochs(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mps_loop(4)[:-1])
    assert artifact["final_metrics"]["loss"] == 0.114  # epoch 4, batch 900
    assert artifact["reading"]["progress"] == "epoch"


def test_an_epochs_test_line_at_its_epoch_names_the_plan_reached(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mps_loop(10))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_an_epochs_test_line_short_of_its_plan_is_a_run_still_going(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mps_loop(7))
    assert artifact["terminal_state"] == "RUNNING"
    assert artifact["decision"] == "CONDITIONAL"


# -- A VAE's KL term collapsed to zero: posterior collapse ------------------------------------

def _sentence_vae(kl_after: float, batches: int = 60) -> list[str]:
    # a sentence VAE on PTB through Python logging: `TRAIN Batch 0100/1314, Loss    6.5186,
    # Recon-Loss    6.5146, KL-Loss    0.0040, KL-Weight  1.000`, names hyphenated
    lines = []
    for i in range(batches):
        kl = 0.0517 if i == 0 else kl_after
        recon = 9.19 - 4 * i / batches
        lines.append(f"08/04/2020 05:{26 + i // 20:02d}:{i % 60:02d} - INFO - __main__ -   "
                     f"TRAIN Batch {i * 100:04d}/{batches * 100}, Loss    {recon + kl:.4f}, "
                     f"Recon-Loss    {recon:.4f}, KL-Loss    {kl:.4f}, KL-Weight  1.000")
    lines.append("08/04/2020 05:33:49 - INFO - __main__ -   TRAIN Epoch 00/1, Mean Negative "
                 "ELBO    5.4047, PPL: 81.8343")
    return lines


def test_hyphenated_names_of_a_comma_separated_record_are_its_metrics(tmp_path: Path):
    artifact = verdict_of(tmp_path, _sentence_vae(kl_after=3.2))
    assert artifact["final_metrics"]["recon_loss"] == 5.2567
    assert artifact["final_metrics"]["kl_loss"] == 3.2


def test_a_vae_whose_kl_term_stays_at_zero_has_collapsed(tmp_path: Path):
    artifact = verdict_of(tmp_path, _sentence_vae(kl_after=0.0))
    found = [a for a in artifact["anomalies_detected"] if "posterior collapse" in a["description"]]
    assert [a["type"] for a in found] == ["not-learning"]


def test_a_vae_whose_kl_term_carries_information_has_not(tmp_path: Path):
    artifact = verdict_of(tmp_path, _sentence_vae(kl_after=3.2))
    assert not [a for a in artifact["anomalies_detected"]
                if "posterior collapse" in a["description"]]


def test_a_policys_kl_near_zero_is_no_vaes_collapse(tmp_path: Path):
    # PPO's KL to its reference policy, with no reconstruction term beside it
    lines = [f"step {i} | policy_loss {0.5 - i * 0.001:.4f} | kl {0.02 if i == 0 else 0.0:.4f}"
             f" | reward {i * 0.01:.3f}" for i in range(80)]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"]
                if "posterior collapse" in a["description"]]
