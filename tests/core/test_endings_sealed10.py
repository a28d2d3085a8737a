"""How runs end, from sealed-10's failures (issue 23 item 4): a stop the process reports
itself (Paddle's signal handler, the run's own "interrupted by the user" in its
language), a launcher's restart after an out-of-memory failure, TF1 Estimator's final
step and the evaluation after it, a configuration dump's upper-case plan, and Keras's
`fit` seen to return. Each line is quoted from the sealed-10 log named beside it, in the
shape its framework's source prints (cited at each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.events import find_events
from babysit.parsing.frameworks import planned_epochs
from tests.core.test_endings import once


def kinds(line: str) -> list[EventKind]:
    return [e.kind for e in find_events(line)]


# --- a native signal handler's report ------------------------------------------------------
# paddle/fluid/platform/init.cc, SignalHandle: `FatalError: `%s` is detected by the
# operating system.` then `[SignalInfo: *** %s (@0x%lx) received by PID %d …]`
# (attngan_paddle_nohup_resume_epoch7_errD1_errD2_pinned_100_sigterm_fatalerror.log)
_PADDLE_TERM = "FatalError: `Termination signal` is detected by the operating system."
_SIGNAL_INFO = ("  [SignalInfo: *** SIGTERM (@0x3e800001ef9) received by PID 7866 (TID "
                "0x7fd2759b0700) from PID 7929 ***]")
_PADDLE_TAIL = "\n".join([
    "", "", "--------------------------------------",
    "C++ Traceback (most recent call last):",
    "--------------------------------------",
    "0   paddle::pybind::MultiDeviceFeedReader<paddle::operators::reader::"
    "LoDTensorBlockingQueue>::CheckNextStatus()",
    "1   paddle::pybind::MultiDeviceFeedReader<paddle::operators::reader::"
    "LoDTensorBlockingQueue>::WaitFutures(std::__exception_ptr::exception_ptr*)",
    "", "----------------------", "Error Message Summary:", "----------------------",
    _PADDLE_TERM,
    '  [TimeInfo: *** Aborted at 1635751836 (unix time) try "date -d @1635751836" if you '
    'are using GNU date ***]',
    _SIGNAL_INFO, ""])


def _gan_reports(n: int) -> str:
    """AttnGAN-Paddle's three-line report every 10 batches."""
    return "".join(f"| epoch  20 |   {10 * i}/ 2586 batches |\n"
                   f"errD0: {1.3 + 0.01 * (i % 7):.2f} errD1: 100.00 errD2: 100.00 \n"
                   f"g_loss0: {2.5 + 0.1 * (i % 5):.2f} g_loss1: 0.00 g_loss2: 0.00 "
                   f"w_loss: 4.85 s_loss: 14.74 kl_loss: 1.87 \n" for i in range(1, n + 1))


def test_paddles_termination_signal_is_a_stop_from_outside() -> None:
    assert kinds(_PADDLE_TERM) == [EventKind.STOPPED_BY_SIGNAL]
    assert EventKind.STOPPED_BY_SIGNAL in kinds(_SIGNAL_INFO)


def test_any_other_signal_paddle_reports_is_a_crash() -> None:
    # the same handler's words for SIGFPE (PaddleOCR's MKL error, as users quote it)
    line = "FatalError: `Erroneous arithmetic operation` is detected by the operating system."
    assert kinds(line) == [EventKind.SEGFAULT]
    assert EventKind.STOPPED_BY_SIGNAL not in kinds(
        "FatalError: `Segmentation fault` is detected by the operating system.")


def test_a_paddle_run_sent_sigterm_is_cancelled(tmp_path: Path) -> None:
    data = once(tmp_path, _gan_reports(20) + _PADDLE_TAIL)
    assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO"), data["summary"]
    assert not any(a["type"] == "crash" and a["severity"] in ("high", "blocker")
                   for a in data["anomalies_detected"])


# --- the run's own words that its user stopped it ------------------------------------------
# alphazero_connect4_spanish_selfplay_iterations_user_interrupt_twice_checkpoint_final.log
_ALPHAZERO = """2026-06-17 20:28:29 | INFO | AlphaZero Connect 4 — Inicio de entrenamiento
2026-06-17 20:28:29 | INFO | Dispositivo: cuda
{iterations}2026-06-17 23:24:19 | INFO | Iteración 23 | Generando 100 partidas...
2026-06-17 23:29:18 | INFO |   Auto-juego: 3544 estados | Búfer: 81564/100000 | Tiempo: 298.9s
2026-06-17 23:30:36 | INFO | Entrenamiento interrumpido por el usuario.
2026-06-17 23:30:36 | INFO | Checkpoint final guardado en checkpoints/best_model.pt
"""


def _iterations(n: int) -> str:
    return "".join(f"2026-06-17 21:{i:02d}:45 | INFO |   Entrenamiento: loss={2.0 - 0.02 * i:.4f} "
                   f"(value=0.2445, policy=1.3063) | Tiempo: 4.6s\n"
                   f"2026-06-17 21:{i:02d}:45 | INFO | Iteración {i} completada en 314.7s | "
                   f"Total partidas: {100 * i}\n" for i in range(1, n + 1))


@pytest.mark.parametrize("line", [
    "2026-06-17 23:30:36 | INFO | Entrenamiento interrumpido por el usuario.",
    "Training interrupted by user",
    "Treinamento interrompido pelo usuário.",
    "Entraînement interrompu par l'utilisateur",
    "Training vom Benutzer abgebrochen",
    "训练被用户中断",
    "Process stopped by the user, saving checkpoint...",
])
def test_a_stop_by_the_user_in_the_runs_own_language(line: str) -> None:
    assert EventKind.STOPPED_BY_SIGNAL in kinds(line)


@pytest.mark.parametrize("line", [
    "Iteración 23 | Generando 100 partidas...",
    "Usuario: admin | GPU: 0",
    "the user can interrupt training with Ctrl-C",
])
def test_other_words_of_users_are_no_stop(line: str) -> None:
    assert EventKind.STOPPED_BY_SIGNAL not in kinds(line)


def test_a_self_play_loop_its_user_interrupted_is_cancelled(tmp_path: Path) -> None:
    data = once(tmp_path, _ALPHAZERO.format(iterations=_iterations(12)))
    assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO"), data["summary"]


# --- a launcher's restart after an out-of-memory failure -----------------------------------
# torch/distributed/elastic/agent/server/api.py, `_invoke_run`; the lines of
# mmediting_basicvsr_2gpu_charbonnier_cuda_oom_elastic_restart_worker_group.log
_AGENT = "INFO:torch.distributed.elastic.agent.server.api:[default] "
_ELASTIC_RESTART = "\n".join([
    f"{_AGENT}Worker group FAILED. 3/3 attempts left; will restart worker group",
    f"{_AGENT}Stopping worker group", f"{_AGENT}Rendezvous'ing worker group",
    f"{_AGENT}Rendezvous complete for workers. Result:",
    "  restart_count=1", "  master_addr=127.0.0.1", "  master_port=29500", ""])
_WORKER_DIED = "\n".join([
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
    "(pid: 2532) of binary: /home/u/miniconda3/envs/open-mmlab/bin/python",
    "ERROR:torch.distributed.elastic.agent.server.local_elastic_agent:[default] Worker group "
    "failed", ""])
_OOM_TRACEBACK = "\n".join([
    "Traceback (most recent call last):",
    '  File "/home/u/mmediting/mmedit/models/losses/pixelwise_loss.py", line 51, in '
    "charbonnier_loss",
    "    return torch.sqrt((pred - target)**2 + eps)",
    "RuntimeError: CUDA out of memory. Tried to allocate 46.00 MiB (GPU 0; 11.78 GiB total "
    "capacity; 10.27 GiB already allocated; 12.88 MiB free; 10.41 GiB reserved in total by "
    "PyTorch)", ""])
_OTHER_TRACEBACK = "\n".join([
    "Traceback (most recent call last):",
    '  File "train.py", line 12, in <module>',
    "    dist.barrier()",
    "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, "
    "for key: store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)", ""])


def _iters(first: int, last: int) -> str:
    return "".join(f"2021-05-01 10:00:00,000 - mmedit - INFO - Iter [{i}/300000]\t"
                   f"lr: 1.000e-04, loss_pix: {0.05 - i * 1e-6:.4f}, "
                   f"loss: {0.05 - i * 1e-6:.4f}\n"
                   for i in range(first, last + 1, 100))


def test_a_restart_after_running_out_of_memory_is_no_recovery(tmp_path: Path) -> None:
    data = once(tmp_path, _iters(100, 5000) + _OOM_TRACEBACK + _WORKER_DIED + _ELASTIC_RESTART)
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO"), data["summary"]
    types = {a["type"] for a in data["anomalies_detected"]}
    assert {"oom", "crash"} <= types
    crash = next(a for a in data["anomalies_detected"] if a["type"] == "crash")
    assert "runs out of memory again" in crash["description"]


def test_a_restart_after_another_failure_is_a_new_attempt(tmp_path: Path) -> None:
    data = once(tmp_path, _iters(100, 5000) + _OTHER_TRACEBACK + _WORKER_DIED + _ELASTIC_RESTART)
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_workers_training_again_after_the_restart_are_running(tmp_path: Path) -> None:
    data = once(tmp_path, _iters(100, 5000) + _OOM_TRACEBACK + _WORKER_DIED + _ELASTIC_RESTART
                + _iters(5100, 6000))
    assert data["terminal_state"] == "RUNNING", data["summary"]


# --- TF1 Estimator: its final step, then its evaluation ------------------------------------
# tensorflow_estimator/python/estimator/estimator.py: `Loss for final step: %s.` as
# train() returns; `_write_dict_to_summary`: `Saving dict for global step %d: %s` for each
# evaluation; BERT's run_classifier.py: `***** Eval results *****`, then `  %s = %s`
# (tf1_estimator_bert_similarity_nohup_5468_steps_loss_for_final_step_eval_results.log)
def _estimator_run(final: bool) -> str:
    lines = [f"INFO:tensorflow:loss = {0.4 / (1 + step / 500) + 0.01 * (step % 3):.8f}, "
             f"step = {step} (146.923 sec)\nINFO:tensorflow:global_step/sec: 0.692205"
             for step in range(0, 5468, 100)]
    lines.append("INFO:tensorflow:Saving checkpoints for 5468 into ../tmp/result/model.ckpt.")
    if final:
        lines.append("INFO:tensorflow:Loss for final step: 0.0025181356.")
    lines += ["INFO:tensorflow:***** Running evaluation *****",
              "INFO:tensorflow:Starting evaluation at 2019-02-18-08:07:59",
              "INFO:tensorflow:Finished evaluation at 2019-02-18-08:09:56", *ESTIMATOR_EVALUATION]
    return "\n".join(lines) + "\n"


# The evaluation's dict and BERT's results block, as the run printed them at its end.
ESTIMATOR_EVALUATION = [
    "INFO:tensorflow:Saving dict for global step 5468: eval_accuracy = 0.8500477, "
    "eval_auc = 0.68875444, eval_loss = 0.7216634, global_step = 5468, loss = 0.7218847",
    "INFO:tensorflow:***** Eval results *****",
    "INFO:tensorflow:  eval_accuracy = 0.8500477",
    "INFO:tensorflow:  eval_auc = 0.68875444",
    "INFO:tensorflow:  eval_loss = 0.7216634",
    "INFO:tensorflow:  global_step = 5468",
    "INFO:tensorflow:  loss = 0.7218847"]


def test_the_estimators_final_step_behind_its_logger_ends_the_run(tmp_path: Path) -> None:
    assert kinds("INFO:tensorflow:Loss for final step: 0.0025181356.") == [EventKind.COMPLETED]
    data = once(tmp_path, _estimator_run(final=True))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    # the evaluation's loss (0.72) is no training loss spike
    assert not [a for a in data["anomalies_detected"] if a["type"] == "loss-spike"]
    assert data["final_metrics"]["loss"] < 0.5


def test_an_estimator_that_never_said_its_final_step_is_not_over(tmp_path: Path) -> None:
    assert once(tmp_path, _estimator_run(final=False))["terminal_state"] == "RUNNING"


# --- a configuration dump's upper-case plan ------------------------------------------------
# yacs CfgNode dumps (Oscar-Paddle's `OPTIMIZATION:` / `  EPOCHS: 30`,
# paddle_fleet_2rank_workerlog0_oscar_coco_retrieval_30_of_30_epochs_eval_r1_saved.log)
@pytest.mark.parametrize(("line", "epochs"), [
    ("  EPOCHS: 30", 30), ("  MAX_EPOCH: 12", 12), ("NUM_EPOCHS: 200", 200),
    ("  WARMUP_EPOCHS: 5", None), ("EPOCH: 3", None), ("Epoch: 30", None),
])
def test_upper_case_epoch_keys_are_the_plan(line: str, epochs: int | None) -> None:
    assert planned_epochs(line) == epochs


_OSCAR_HEAD = """01/02/2022 23:10:22 - INFO - Using configs:
OPTIMIZATION:
  BATCH_SIZE: 16
  EPOCHS: {epochs}
  LR: 1e-05
01/02/2022 23:10:27 - INFO - ** ** ** Running training ** ** **
"""


def _oscar_epochs(epochs: int, planned: int) -> str:
    text = _OSCAR_HEAD.format(epochs=planned)
    for epoch in range(1, epochs + 1):
        text += "".join(f"01/03/2022 02:19:42 - INFO - Epoch: [{epoch}], step: [{s}], lr: "
                        f"{1e-5 * (1 - epoch / planned):.6f}, "
                        f"batch_loss: {0.05 / (epoch + s / 500):.4f}, "
                        f"avg_loss: {0.008 / epoch:.4f}\n" for s in range(100, 600, 100))
        text += (f"01/03/2022 02:19:43 - INFO - ** ** Epoch [{epoch}] done! Training loss: "
                 f"{0.008 / epoch:.5f} ** **\n"
                 f"01/03/2022 02:21:02 - INFO - ** * ** Eval at Epoch [{epoch}]! Eval "
                 f"Reults:  ** * **\n"
                 f"01/03/2022 02:21:02 - INFO - I2T Retrieval: 0.8440 @ R1, 0.9760 @ R5, "
                 f"0.9900 @ R10\n"
                 f"01/03/2022 02:21:04 - INFO - ** * ** Saving trained model to "
                 f"./exp/checkpoint-{epoch}. ** * **\n")
    return text


def test_the_last_epoch_of_an_upper_case_plan_ends_the_run(tmp_path: Path) -> None:
    data = once(tmp_path, _oscar_epochs(30, 30))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]


def test_an_epoch_short_of_that_plan_is_running(tmp_path: Path) -> None:
    assert once(tmp_path, _oscar_epochs(12, 30))["terminal_state"] == "RUNNING"


# --- Keras's fit seen to return --------------------------------------------------------------
# keras/src/utils/progbar.py draws `116/116 ━━━━ 0s 2ms/step - loss: … - val_loss: …` under
# `Epoch N/M`; `predict` draws its own bar with no metric after `fit` returned
# (moku_nn_keras_notebook_classification_val_loss_rises_from_epoch_2_stops_429_of_1000.log)
_BAR = ("\x1b[1m{n}/{n}\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m "
        "\x1b[1m1s\x1b[0m 4ms/step")


def _keras_fit(epochs: int, planned: int) -> str:
    text = ""
    for epoch in range(1, epochs + 1):
        text += (f"Epoch {epoch}/{planned}\n" + _BAR.format(n=158)
                 + f" - loss: {0.9 / epoch:.4f} - val_loss: {0.39 + 0.001 * epoch:.4f}\n")
    return text


_AFTER_FIT = (_BAR.format(n=158) + "\n" + _BAR.format(n=18) + "\n"
              "---------- Model Accuracy ----------\nTrain: \t 91.96 %\nVal: \t 91.61 %\n"
              "------------------------------------\n"
              "Network latency approx. 355 cycles\n")


def test_a_fit_that_returned_short_of_its_plan_ended(tmp_path: Path) -> None:
    data = once(tmp_path, _keras_fit(40, 1000) + _AFTER_FIT)
    assert (data["terminal_state"], data["decision"]) == ("ENDED", "CONDITIONAL"), data["summary"]


def test_a_fit_still_in_its_epochs_is_running(tmp_path: Path) -> None:
    assert once(tmp_path, _keras_fit(40, 1000))["terminal_state"] == "RUNNING"


def test_a_fit_at_its_plan_then_predict_succeeded(tmp_path: Path) -> None:
    data = once(tmp_path, _keras_fit(40, 40) + _AFTER_FIT)
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


# --- an early stop said with a hyphen --------------------------------------------------------
# xLearn's solver (`[ ACTION     ] Early-stopping at epoch 3`, then `Start to save model ...`;
# xlearn_ffm_table_early_stopping_at_epoch_3_save_model.log)
def test_an_early_stop_said_with_a_hyphen_is_one() -> None:
    events = find_events("[ ACTION     ] Early-stopping at epoch 3")
    assert [(e.kind, e.detail) for e in events] == [(EventKind.COMPLETED, "early-stop")]
