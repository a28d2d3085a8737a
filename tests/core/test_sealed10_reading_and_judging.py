"""Reading and judging, from the newest blind set's failures (issue 23 items 1-3, issue 24
items 1-2). Each test feeds real lines, quoted from the public logs of
tests/fixtures/logs/public/sealed-10 named beside it (shortened where a line repeats), and
asserts what a user sees: the decision, the terminal state, the findings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babysit.model import EventKind
from babysit.parsing.parser import LogParser
from babysit.parsing.status_column import split_status_box
from babysit.rules.history_shape import unlearned_history
from tests.core.test_endings_sealed10 import ESTIMATOR_EVALUATION
from tests.rules.test_loss_rules import verdict_of


def _open(data: dict[str, Any]) -> dict[str, str]:
    """Open findings' types and their severities."""
    return {a["type"]: a["severity"] for a in data["anomalies_detected"]
            if "resolved:" not in a["description"]}


# --- a googletest-style status box (xlearn_ffm_table_early_stopping_at_epoch_3_save_model)

_XLEARN = [
    "[------------] Epoch      Train log_loss       Test log_loss            Test AUC     "
    "Time cost (sec)",
    "[    1%      ]     1            0.615199            0.614211            0.632410       "
    "        19.29",
    "[    2%      ]     2            0.614572            0.613964            0.632814       "
    "        19.08",
    "[    3%      ]     3            0.614475            0.613909            0.632656       "
    "        19.21",
    "[    4%      ]     4            0.614376            0.614003            0.632342       "
    "        19.09",
    "[    5%      ]     5            0.614315            0.614300            0.633588       "
    "        19.18",
    "[ ACTION     ] Early-stopping at epoch 3",
    "[ ACTION     ] Start to save model ...",
]


def test_a_status_box_is_taken_off_and_the_table_behind_it_is_read(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _XLEARN)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert "test_auc" in data["final_metrics"]


def test_a_status_box_is_only_a_padded_word_a_percentage_or_a_rule() -> None:
    assert split_status_box("[ ACTION     ] Early-stopping at epoch 3") == \
        ("Early-stopping at epoch 3", None)
    assert split_status_box("[------------] Epoch  Train log_loss") == \
        ("Epoch  Train log_loss", None)
    assert split_status_box("[   80%      ]     8      nan") == ("    8      nan", 80.0)
    for kept in ("[ 12/540] | loss: 2.28", "[5] loss 0.3", "[INFO] loss=0.3",
                 "[rank0]: step 1 loss 2.0", "[2024-01-01 10:00:00] loss 1"):
        assert split_status_box(kept) == (kept, None)


# --- a solver's closing line (libshorttext_liblinear_hard_wrapped_prompt_optimization_…)

def test_a_solvers_closing_line_gives_its_iterations_as_the_runs_progress(
        tmp_path: Path) -> None:
    data = verdict_of(tmp_path, [
        "(epd)blannon@monster:~/src/libshorttext-1.0$ python text-train.py -P /home/blannon/"
        "experiments/CRP-",
        "expenditures_learn-type-codes/data/expends2012.sorted.labeled.csv.text_converter",
        "*.*..*.*.*",
        "optimization finished, #iter = 51",
        "Objective value = -5086396.653973",
        "nSV = 38497797",
    ])
    assert (data["decision"], data["terminal_state"], data["total_steps"]) == \
        ("GO", "SUCCEEDED", 51)


def test_an_iteration_count_said_without_an_ending_is_no_step() -> None:
    parser = LogParser()
    parser.feed_lines(["*.*..*.*.*", "iterations: 51 so far"])
    assert parser.step is None


# --- a loss that explodes and climbs on (mindspore_mindyolo_8card_overflow_…_step_400)

def test_a_spike_the_next_point_climbs_above_is_a_runaway_divergence(tmp_path: Path) -> None:
    lines = []
    for step, (loss, lcls) in zip((100, 200, 300, 400), ((11.6707, 5.5689), (8.8465, 3.8950),
                                                          (8712.5938, 8705.2168),
                                                          (15806.3818, 15799.6025)), strict=True):
        lines += ["2024-12-25 09:58:34,125 [WARNING] overflow, still update, loss scale adjust "
                  "to 1024.0",
                  f"2024-12-25 09:58:42,787 [INFO] Epoch 1/200, Step {step}/3995, imgsize "
                  f"(640, 640), loss: {loss}, lbox: 3.6262, lcls: {lcls}, dfl: 2.4756, "
                  f"cur_lr: 0.09924906492233276"]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO"
    assert _open(data)["divergence"] == "blocker"


def test_a_spike_that_comes_back_is_no_divergence(tmp_path: Path) -> None:
    losses = [2.3, 2.2, 2.1, 2.0, 1.9, 1.85, 1.8, 1.75, 1.7, 400.0, 1.65, 1.6, 1.58]
    data = verdict_of(tmp_path, [f"step={i + 1} loss={v}" for i, v in enumerate(losses)])
    assert "divergence" not in _open(data)


# --- matplotlib's font matching (rltrader_a3c_five_stock_workers_interleaved_…) -----------

def test_a_library_scoring_its_own_objects_is_no_metric() -> None:
    records = LogParser().feed_lines([
        "findfont: score(<Font 'STIXSizeFourSym' (STIXSizFourSymReg.ttf) normal normal regular "
        "normal>) = 10.05",
        "findfont: score(<Font 'cmr10' (cmr10.ttf) normal normal 400 normal>) = 10.335",
    ])
    assert not any(r.metrics for r in records)


# --- series kept apart per worker or experiment -------------------------------------------

def _a3c(epochs: int) -> list[str]:
    """Five workers, one per stock, each printing its own epochs (a value loss that does not
    fall, the exploration rate annealed)."""
    lines = []
    for epoch in range(1, epochs + 1):
        eps = 1 - (epoch - 1) / (epochs - 1)
        for stock, base in (("000660", 61.8), ("005930", 36.9), ("035420", 26.8),
                            ("035720", 70.0), ("051910", 51.9)):
            loss = base * (1 + 0.1 * ((epoch * 7 + len(stock)) % 5 - 2) / 2)
            lines.append(f"[{stock}][Epoch {epoch:02d}/{epochs}] Epsilon:{eps:.4f} "
                         f"#Expl.:243/243 #Buy:112 #Sell:93 #Hold:38 #Stocks:189 "
                         f"PV:14,959,787 LC:18 Loss:{loss:.6f} ET:77.5697")
    for stock in ("000660", "005930", "035420", "035720", "051910"):
        lines.append(f"[{stock}] Elapsed Time:4159.5955 Max PV:15,753,771 #Win:50")
    return lines


def test_interleaved_workers_are_series_of_their_own() -> None:
    records = [r for r in LogParser().feed_lines(_a3c(10)) if r.metrics]
    assert {r.series for r in records[-20:]} == {"[000660]", "[005930]", "[035420]",
                                                  "[035720]", "[051910]"}


def test_a_finished_agent_whose_value_loss_does_not_fall_is_go(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _a3c(50))
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert "not-learning" not in _open(data)


def test_a_sweeps_interleaved_runs_make_no_divergence(tmp_path: Path) -> None:
    """quantum_nn_parallel_sweep_36_experiments_interleaved_folds_…: runs of very different
    loss levels print in turn."""
    runs = {"Moons_QFNN_Phase and Measure_fold_1": 1.88, "Linear Blobs_QFNN_Interference and "
            "Measure_fold_1": 8.06, "XOR_QFNN_All_final": 0.6965, "Circles_QBPNN_All_fold_2": 0.37}
    lines = ["2025-04-16 01:27:32,555 - INFO - 🚀 Starting Quantum Experiment Suite"]
    for epoch in range(1, 31):
        for name, level in runs.items():
            loss = level * (1 - 0.2 * epoch / 30) if level > 1 else level
            lines.append(f"2025-04-18 03:27:55,784 - INFO - Run: {name} | Epoch: {epoch} | "
                         f"Train Loss: {loss:.4f} | Val Loss: {loss * 1.1:.4f} | Val Acc: 0.5000")
    lines.append("2025-04-25 05:09:52,318 - INFO - 🎉 Experiment Suite Completed Successfully")
    data = verdict_of(tmp_path, lines)
    assert not {"divergence", "loss-spike"} & _open(data).keys()


def test_a_logger_s_sections_are_not_series() -> None:
    """fairseq's `[train_inner][INFO]` and `[valid][INFO]`: a logger's name before its level,
    with different figures in each."""
    parser = LogParser()
    lines = []
    for i in range(1, 6):
        lines += [f'[2022-06-06 09:18:44,886][train_inner][INFO] - {{"epoch": {i}, '
                  f'"loss": "0.264", "num_updates": "{200 * i}"}}',
                  f'[2022-06-06 09:20:28,960][valid][INFO] - {{"epoch": {i}, '
                  f'"valid_loss": "0.267", "valid_num_updates": "{200 * i}"}}']
    assert not any(r.series for r in parser.feed_lines(lines))


def test_labels_count_once_they_interleave() -> None:
    """A label is no series until labels have come back after one another: the first
    round of five workers is read as before."""
    records = [r for r in LogParser().feed_lines(_a3c(10)) if r.metrics]
    assert not any(r.series for r in records[:5])
    assert all(r.series for r in records[-5:])


# --- a W&B sparkline (lsf_jax_paligemma_finetune_5000_steps_wandb_sparkline_…) -----------

_PALIGEMMA_TAIL = [
    "wandb: Run history:",
    "wandb: loss ▃▆█▆▅▂▅▆▅▇▇▅▃▇▆█▄▅▇▆▇▆▃▂▄▇█▅▄█▃▃▃▃▆▄▆▄▄▁",
    "wandb:   lr ███████▇▇▇▇▇▆▆▆▆▅▅▅▅▄▄▄▄▃▃▃▃▂▂▂▂▂▁▁▁▁▁▁▁",
    "wandb: step ▁▁▁▁▂▂▂▂▂▃▃▃▃▃▃▄▄▄▄▄▅▅▅▅▅▅▆▆▆▆▆▇▇▇▇▇▇███",
    "wandb: ",
    "wandb: Run summary:",
    "wandb: loss 0.11433",
    "wandb:   lr 0.0",
    "wandb: step 5000",
    "Subject: Job 21839144: <32_001_0> in cluster <dcc> Done",
    "Successfully completed.",
]


def test_a_finished_runs_loss_history_that_never_fell_is_not_go(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _PALIGEMMA_TAIL)
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "SUCCEEDED")
    assert _open(data)["not-learning"] == "high"


def test_a_history_is_read_as_its_heights() -> None:
    records = LogParser().feed_lines(_PALIGEMMA_TAIL[:2])
    events = [e for r in records for e in r.events if e.kind is EventKind.HISTORY]
    assert events and events[0].detail.startswith("loss 257541454664")


def test_healthy_runs_histories_show_learning() -> None:
    # lsf_painn_custom_epoch_clean, trl_sft_llama2_… (sealed-4), simg_gat_wandb_sweep_…
    for name, bars in (("train_loss", "█▅▅▃▂▂▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁"),
                       ("train/loss", "▇██▇▆▅▄▃▃▃▃▂▃▂▁▂▁▂▂▂▂▂▁▂▁▁"),
                       ("train_loss", "█▅▅▅▆▅▆▄▄▅▄▄▄▃▄▄▃▃▃▃▂▂▂▂▂▂▂▂▁▂▁▁▂"),
                       ("Loss/train", "▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁"),
                       ("val_loss", "▄▂▁▁▁▂▂▃▃▄▃▄▄▄▄▄▄▄▄▅▄▃▄▄▄█▄▄▄▃▄▄▃")):
        heights = "".join(str("▁▂▃▄▅▆▇█".index(b)) for b in bars)
        assert unlearned_history(name, heights) is None, name


# --- a cost beside a bare `train` accuracy (cs231n_numpy_solver_nohup_4096_byte_flush_…) --

def test_a_cost_is_the_objective_and_a_rising_train_accuracy_no_divergence(
        tmp_path: Path) -> None:
    lines = ["X_train: (49000, 3, 32, 32)"]
    for epoch in range(1, 45):
        cost = 2.3 * 0.93 ** epoch + 0.2
        train = min(0.92, 0.3 + epoch * 0.03)
        lines.append(f"Finished epoch {epoch} / 60: cost {cost:.6f}, train: {train:.6f}, "
                     f"val {min(0.71, 0.3 + epoch * 0.03):.6f}, lr {5e-4 * 0.95 ** epoch:.6e}")
    lines.append("Finished epoch 45 / 60")
    data = verdict_of(tmp_path, lines)
    assert "divergence" not in _open(data)
    assert "cost" in data["final_metrics"]


# --- TF1's Estimator under Python logging's default head (tf1_estimator_bert_similarity_…)

def test_a_completion_behind_pythons_logging_head_is_read() -> None:
    records = LogParser().feed_lines([
        "INFO:tensorflow:loss = 0.01693129, step = 5400 (147.086 sec)",
        "INFO:tensorflow:Loss for final step: 0.0025181356.",
    ])
    assert any(e.kind is EventKind.COMPLETED for r in records for e in r.events)


def test_the_evaluation_after_training_is_no_spike_and_no_training(tmp_path: Path) -> None:
    """tf1_estimator_bert_similarity_nohup_5468_steps_loss_for_final_step_eval_results: the
    evaluation's loss (0.72) after training losses near 0.05, at the final checkpoint's
    step."""
    losses = [0.40, 0.35, 0.30, 0.27, 0.22, 0.15, 0.11, 0.10, 0.12, 0.08, 0.06, 0.09, 0.05]
    lines = ["INFO:tensorflow:  Num steps = 5468"]
    lines += [f"INFO:tensorflow:loss = {v}, step = {(i + 1) * 400} (144.4 sec)"
              for i, v in enumerate(losses)]
    lines += [
        "INFO:tensorflow:Saving checkpoints for 5468 into /tmp/result/model.ckpt.",
        "INFO:tensorflow:Loss for final step: 0.0025181356.",
        "INFO:tensorflow:***** Running evaluation *****",
        *ESTIMATOR_EVALUATION,
    ]
    data = verdict_of(tmp_path, lines)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert "loss-spike" not in _open(data)
    assert data["final_metrics"]["eval/loss"] == 0.7218847


# --- a loss whose noise is multiplicative (bilstm_crf_medical_ner_appended_runs_…) --------

_CRF = [18844.4727, 2733.7429, 5023.7744, 796.1688, 596.8674, 32.1316, 175.2357, 280.6040,
        324.0581, 19.5681, 32.5018, 17.5972, 705.4846, 74.5758, 225.0414, 14.1810, 479.8769,
        30.9860, 64.4949, 23.8215, 225.0867, 4.0645, 263.3771, 421.0811, 0.3968, 12.9994,
        59.3522, 5.7143, 13.7376, 405.1599, 47.8173, 28.9295, 30.5829, 95.9215, 13.2358,
        53.5304, 157.6451, 26.0815, 4.6774, 52.1891, 19.0367, 14.2945, 192.0824, 1.3820,
        90.7978, 7.1112, 3.3709, 7.7240, 498.4497, 92.0737, 73.4435, 31.4263, 44.9567,
        37.1240, 2.8665, 14.8009, 51.4291, 1740.9380, 73.9223, 36.9793, 85.9778, 38.2769,
        91.6921, 21.7052, 8.2281, 6.7491, 70.3775, 1734.3059, 0.0056, 1.7685, 3.7833]


def test_a_summed_crf_loss_swinging_over_orders_of_magnitude_has_no_spike(
        tmp_path: Path) -> None:
    lines = [f"2020-05-25 20:46:49,055 - main.py - train - INFO - Iter: {100 * (i + 1)} | "
             f"Train Loss: {v:.4f} | Dev Loss: 31.6297 | Dev F1-macro: 0.1713 | Time: 0:00:57"
             for i, v in enumerate(_CRF)]
    data = verdict_of(tmp_path, lines)
    assert not any(a["type"] == "loss-spike" for a in data["anomalies_detected"])


def test_a_jump_of_a_steady_loss_is_still_a_spike(tmp_path: Path) -> None:
    losses = [2.0 - 0.002 * i + 0.01 * ((i * 7) % 3) for i in range(60)]
    losses[55] = 9.0
    data = verdict_of(tmp_path, [f"step={i + 1} loss={v:.4f}" for i, v in enumerate(losses)])
    assert any(a["type"] == "loss-spike" and a["severity"] == "high"
               for a in data["anomalies_detected"])


# --- a loss that leaves its level and comes back, again and again (leads_multienv_pinn_…) --

def test_a_height_the_loss_came_back_from_is_no_runaway(tmp_path: Path) -> None:
    """Epochs 760-800 and 1425-1500 of the PINN's loss: it climbed 5x from 0.31 to 1.7
    and came back, then climbs to a height below that again."""
    first = [0.578, 0.544, 0.52, 0.485, 0.46, 0.405, 0.367, 0.342, 0.324, 0.325, 0.321,
             0.347, 0.367, 0.375, 0.375, 0.321, 0.312, 0.341, 0.344, 0.612, 1.09, 1.25, 1.2,
             1.31, 1.57, 1.67, 1.7, 1.66, 1.59, 1.5, 1.26, 1.06, 0.607, 0.553]
    calm = [0.3 - 0.001 * i for i in range(40)]
    again = [0.207, 0.185, 0.141, 0.14, 0.144, 0.0985, 0.105, 0.132, 0.203, 0.121, 0.0541,
             0.15, 0.223, 0.231, 0.221, 0.535, 0.852, 0.979, 1.06, 0.985, 0.845, 0.775]
    start = [2.4 - 0.09 * i for i in range(20)]  # the run began at 2.4 and fell
    lines = [f"[{i}][{i}/2000][1/1] | loss: {v:.3e} | loss_train: {v / 3:.3e}"
             for i, v in enumerate(start + first + calm + again, start=1)]
    data = verdict_of(tmp_path, lines)
    second = len(start + first + calm)
    assert not any(a["type"] == "divergence" and a["severity"] == "blocker"
                   and a["step"] > second for a in data["anomalies_detected"])
