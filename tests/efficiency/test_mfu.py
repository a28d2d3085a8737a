"""MFU, tokens/s and their inputs: the formula on hand-computed cases, what is left out,
what is missing, and babysit's estimate from a real training log against the MFU the
training process computed from measured FLOPs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from babysit.config import EfficiencySettings
from babysit.core.efficiency_meter import EfficiencyMeter
from babysit.efficiency.flops import flops_per_token
from babysit.efficiency.mfu import Update, mfu
from babysit.efficiency.peaks import Peak, peak_for
from babysit.model import Record
from babysit.parsing.facts import run_facts
from tests.conftest import LOGS
from tests.forked_cli import python_m_babysit

TRUTH_LOG = LOGS / "mfu" / "cpu_tiny_gpt.log"


def test_mfu_is_a_ratio_of_totals_over_gpus_and_peak():
    # 8 GPUs × 989.5 TFLOP/s; 2 updates: 1M tokens in 2 s, then 1M tokens in 6 s.
    # FLOPs/token 7.2e8 → 2e6 × 7.2e8 / 8 s = 1.8e14 FLOP/s over 7.916e15 = 2.2739 %.
    found = mfu([Update(1e6, 2.0), Update(1e6, 6.0)], 7.2e8, 8, 989.5)
    assert found is not None
    assert found.value == pytest.approx(2e6 * 7.2e8 / 8.0 / (8 * 989.5e12))
    assert found.tokens_per_second == pytest.approx(250_000)
    # Not the mean of the two per-update figures (which would be 3.03 %).
    per_update = [u.tokens * 7.2e8 / u.seconds / (8 * 989.5e12) for u in
                  (Update(1e6, 2.0), Update(1e6, 6.0))]
    assert found.value != pytest.approx(sum(per_update) / 2)


def test_flops_per_token_names_its_formula_and_what_it_leaves_out():
    full = flops_per_token(given=None, params=124e6, layers=12, width=768, seq_len=1024)
    assert not isinstance(full, str)
    assert full.value == 6 * 124e6 + 12 * 12 * 768 * 1024  # 857.2M
    assert full.formula.startswith("6·N + 12·L·d·T") and full.leaves_out == ""
    dense = flops_per_token(given=None, params=124e6, layers=None, width=None, seq_len=None)
    assert not isinstance(dense, str) and dense.value == 744e6
    assert "attention" in dense.leaves_out
    given = flops_per_token(given=7.2e8, params=None, layers=None, width=None, seq_len=None)
    assert not isinstance(given, str) and given.formula.startswith("given")
    assert "--model-params" in str(flops_per_token(given=None, params=None, layers=None,
                                                   width=None, seq_len=None))


def test_peaks_are_dense_with_a_source_and_unknown_ones_are_not_guessed():
    h100 = peak_for("H100_SXM", "bf16")
    assert isinstance(h100, Peak) and h100.tflops == 989.5 and "datasheet" in h100.source
    assert isinstance(peak_for("nvidia-a100-80gb", "bf16"), Peak)
    assert "pass --peak-tflops" in str(peak_for("a10g", "bf16"))
    assert "no fp8 peak for a100" in str(peak_for("a100", "fp8"))
    assert "no peak known" in str(peak_for("rtx-9999", "bf16"))


@pytest.mark.parametrize("line, facts", [
    ("tokens per iteration will be: 491,520", {"tokens_per_step": 491520}),
    ("number of parameters: 123.69M", {"model_params": 123.69e6}),
    ("Total params: 124,439,808", {"model_params": 124439808}),
    ("trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622",
     {"model_params": 6742609920}),
    ("num decayed parameter tensors: 26, with 10,690,944 parameters", {}),
    ("iter 5: loss 4.2082, time 1431.27ms, mfu 0.01%", {}),
])
def test_what_a_run_says_about_its_size(line: str, facts: dict[str, float]):
    assert run_facts(line) == pytest.approx(facts)


def test_missing_inputs_make_mfu_unavailable_with_the_reason():
    tracker = EfficiencyMeter(EfficiencySettings(gpu="h100-sxm", model_params=1e9))
    tracker.observe(Record(step=1, metrics={"tokens/s": 1e5}))
    found = tracker.now()
    assert found.status == "unavailable" and found.mfu is None
    assert "--gpus" in found.reason
    assert found.tokens_per_second == pytest.approx(1e5)
    no_size = EfficiencyMeter(EfficiencySettings(gpu="h100-sxm", gpus=8)).now()
    assert "--model-params" in no_size.reason


def test_multi_gpu_mfu_from_samples_per_second_and_sequence_length():
    settings = EfficiencySettings(gpu="a100", gpus=4, model_params=1e9, seq_len=2048)
    tracker = EfficiencyMeter(settings)
    tracker.observe(Record(step=10, metrics={"samples/s": 50.0}))
    found = tracker.now()
    # 50 × 2048 tokens/s × 6e9 FLOPs/token / (4 × 312e12) = 49.23 %
    assert found.mfu == pytest.approx(50 * 2048 * 6e9 / (4 * 312e12))
    assert found.inputs["gpus"] == 4 and "leaves_out" not in found.inputs
    assert found.short() == "MFU ~49.2% (est.)"


def test_the_runs_own_mfu_is_shown_and_a_large_disagreement_flagged():
    settings = EfficiencySettings(peak_tflops=100, gpus=1, flops_per_token=1e9,
                                  tokens_per_step=1000)
    tracker = EfficiencyMeter(settings)
    tracker.observe(Record(step=1, metrics={"time_ms": 100.0, "mfu": 25.0}))
    found = tracker.now()  # 1000 × 1e9 / 0.1 s / 1e14 = 10 %
    assert found.mfu == pytest.approx(0.10) and found.log_mfu == pytest.approx(0.25)
    assert "the run reports MFU 25%" in found.disagreement


def test_estimate_from_a_real_training_log_matches_the_measured_mfu(tmp_path: Path):
    """The training process measured its FLOPs (FlopCounterMode) and timed every
    iteration; babysit sees only its log lines."""
    truth = float(re.search(r"mfu over all \d+ iterations \(measured FLOPs\): ([\d.]+)%",
                            TRUTH_LOG.read_text())[1]) / 100
    done = python_m_babysit(
        str(TRUTH_LOG), "--once", "--json", "--peak-tflops", "1.0", "--gpus", "1", "--layers",
        "4", "--width", "256", "--seq-len", "128", "--out-dir", str(tmp_path), cwd=Path.cwd())
    final = json.loads(done.stdout.splitlines()[-1])["artifact"]
    estimate = final["efficiency"]["mfu"]
    assert estimate["status"] == "estimated"
    assert estimate["value"] == pytest.approx(truth, rel=0.03)
    assert estimate["inputs"]["formula"].startswith("6·N + 12·L·d·T")
    assert estimate["inputs"]["tokens_per_step"] == 1024  # read from the log


def test_goodput_is_the_share_of_watched_time_with_progress(tmp_path: Path):
    from dataclasses import replace

    from babysit.config import PollSettings, RuleSettings, Settings
    from babysit.core.reports import NullObserver
    from babysit.core.session import run_session
    from babysit.targets.common.log_file import LocalLogTarget
    from tests.conftest import FakeClock, append, artifact_in

    log = tmp_path / "train.log"
    log.write_text("Step 1/100 | loss=2.0\n")
    more = ["Step 2/100 | loss=1.9\n", "Step 3/100 | loss=1.8\n"]  # then nothing

    def grow(clock: FakeClock) -> None:
        if more:
            append(log, more.pop(0))

    settings = Settings(poll=replace(PollSettings(), interval=30, backoff=False, max_polls=5),
                        rules=replace(RuleSettings(), stall_polls=100), fix=False,
                        out_dir=tmp_path / "out")
    run_session(lambda: LocalLogTarget(log), str(log), "local-log", settings, NullObserver(),
                clock=FakeClock(grow))
    efficiency = artifact_in(tmp_path / "out")["efficiency"]
    assert efficiency["goodput"] == pytest.approx(0.5)  # 2 of 4 watched intervals moved
    assert efficiency["mfu"]["status"] == "unavailable"


def test_a_line_about_tokens_per_step_is_a_fact_not_a_step():
    from babysit.parsing.parser import LogParser

    parser = LogParser()
    record = parser.feed("tokens per step: 524288")
    assert record is not None and record.step is None
    assert record.facts == {"tokens_per_step": 524288}


def test_flops_the_run_reports_per_step_are_used_before_any_estimate():
    settings = EfficiencySettings(peak_tflops=100, gpus=2)  # no model size at all
    tracker = EfficiencyMeter(settings)
    tracker.observe(Record(step=1, metrics={"model_flops": 4e13, "step_time": 0.5}))
    tracker.observe(Record(step=2, metrics={"model_flops": 2e13, "step_time": 0.5}))
    found = tracker.now()  # 6e13 FLOPs in 1 s over 2 × 1e14 = 30 %
    assert found.status == "estimated" and found.mfu == pytest.approx(0.30)
    assert found.inputs["formula"] == "model_flops reported by the run for each step"


def test_an_mfu_above_100_percent_is_a_reading_error_not_a_figure():
    # 8 GPUs assumed where the run has 1: 1000 tokens × 1e9 / 0.001 s / 1e14 = 1000 %.
    settings = EfficiencySettings(peak_tflops=100, gpus=1, flops_per_token=1e9,
                                  tokens_per_step=1000)
    tracker = EfficiencyMeter(settings)
    tracker.observe(Record(step=1, metrics={"time_ms": 1.0}))
    found = tracker.now()
    assert found.status == "unavailable" and found.mfu is None and found.short() == ""
    assert "1e+03% of the hardware's peak, which is impossible" in found.reason
    assert found.inputs["gpus"] == 1  # the inputs stay, to see which one is wrong
    assert found.to_json()["mfu"]["value"] is None


def test_an_impossible_mfu_printed_by_the_run_is_flagged_not_reported():
    # nanoGPT prints `mfu 312.00%` when its peak is set for another GPU.
    tracker = EfficiencyMeter(EfficiencySettings())
    tracker.observe(Record(step=10, metrics={"loss": 2.0, "time_ms": 85.0, "mfu": 312.0}))
    found = tracker.now().to_json()["mfu"]
    assert found["log_reported"] is None
    assert "printed MFU 312%" in found["disagreement"] and "reading error" in found["disagreement"]
