"""How runs end, from sealed-9's failures (issue 23 item 4, issue 24 item 4): a scheduler's
reason said once and the cancellation said again without it, a Ctrl-C echoed onto the
traceback's head, an IDE's exit line, a per-rank training-time summary, a JSON record's
ETA at zero, a relaunch that restarts the iteration counter, a loop stopped at 250 epochs.
Each line is quoted from the log named beside it."""

from __future__ import annotations

from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.epoch_counter import EpochCounter
from babysit.parsing.events import find_events
from babysit.parsing.scheduler_cancels import cancelled_job, restates_cancel
from tests.core.test_endings import once

# slurm_err_gymnasium_ppo_nav_box_precision_warnings_cancelled_due_to_time_limit.log
_TIME_LIMIT = ("slurmstepd: error: *** JOB 41853 ON desktop12 CANCELLED AT 2025-12-10T18:35:21 "
               "DUE TO TIME LIMIT ***")
_PLAIN = "slurmstepd: error: *** JOB 41853 ON desktop12 CANCELLED AT 2025-12-10T18:35:21 ***"


def _epochs(n: int) -> str:
    return "".join(f"Epoch: [{e}]  [ 100/100]  loss: {2.0 - e * 0.1:.4f}  lr: 0.001\n"
                   for e in range(n))


def test_slurms_plain_banner_after_its_time_limit_one_keeps_the_timeout(tmp_path: Path):
    # slurmstepd (req.c `_handle_signal_container`) says the reason for the signal that
    # carries it and the plain banner for the job's other steps.
    data = once(tmp_path, _epochs(5) + _TIME_LIMIT + "\n" + _PLAIN + "\n")
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "TIMEOUT"), data["summary"]


def test_a_plain_cancel_alone_or_of_another_job_is_still_cancelled(tmp_path: Path):
    assert once(tmp_path, _epochs(5) + _PLAIN + "\n")["terminal_state"] == "CANCELLED"
    assert not restates_cancel(_TIME_LIMIT, _PLAIN.replace("41853", "41854"))
    assert not restates_cancel(_PLAIN, _TIME_LIMIT)
    assert cancelled_job(_TIME_LIMIT) == ("41853", "TIME LIMIT")
    assert cancelled_job("*** STEP 43575862.0 ON learnfair0824 CANCELLED AT "
                         "2021-07-14T08:00:36 ***") == ("43575862", "")


def test_a_node_failure_is_a_failure_not_a_cancel(tmp_path: Path):
    line = ("slurmstepd: error: *** JOB 7 ON n12 CANCELLED AT 2024-01-02T03:04:05 DUE TO "
            "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***")
    assert once(tmp_path, _epochs(5) + line + "\n")["terminal_state"] == "FAILED"


def test_ctrl_c_echoed_onto_the_tracebacks_head_is_cancelled_even_cut_off(tmp_path: Path):
    # jetson_pytorch_ssd_ctrl_c_traceback_while_waiting_on_val_loader_only.log: the tty's
    # `^C` glued to Python's traceback head; the paste stops before `KeyboardInterrupt`.
    text = ("^CTraceback (most recent call last):\n"
            '  File "train_ssd.py", line 346, in <module>\n'
            "    val_loss, val_regression_loss, val_classification_loss = test(val_loader, "
            "net, criterion, DEVICE)\n"
            '  File "/usr/lib/python3.6/multiprocessing/connection.py", line 257, in poll\n')
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "CANCELLED"), data["summary"]


def test_pycharms_exit_line_with_a_non_zero_code_is_a_crash(tmp_path: Path):
    # maskscoring_rcnn_benchmark_iter_1880_eta_9_days_pycharm_exit_code_minus_1.log
    text = ("2019-04-22 02:20:37,496 maskrcnn_benchmark.trainer INFO: eta: 9 days, 1:43:25  "
            "iter: 1880  loss: 0.5906 (0.7615)  loss_classifier: 0.3566 (0.4420)  "
            "lr: 0.002500  max mem: 7203\n\nProcess finished with exit code -1\n")
    data = once(tmp_path, _epochs(3) + text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    # an exit status with no cause in the log: a crash, medium (the training was healthy)
    assert [a["severity"] for a in data["anomalies_detected"] if a["type"] == "crash"] \
        == ["medium"]


def test_the_consoles_exit_line_under_a_traceback_keeps_the_exception(tmp_path: Path):
    text = _epochs(3) + ("Traceback (most recent call last):\n"
                         '  File "train.py", line 12, in <module>\n'
                         "ValueError: bad shape\n\nProcess finished with exit code 1\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    crash = [a for a in data["anomalies_detected"] if a["type"] == "crash"]
    assert "ValueError" in crash[0]["description"] and crash[0]["severity"] == "blocker"


def test_run_console_exit_lines_read_by_their_code_and_signal():
    def kinds(line: str) -> set[EventKind]:
        return {e.kind for e in find_events(line)}
    assert EventKind.STOPPED_BY_SIGNAL in kinds(
        "Process finished with exit code 130 (interrupted by signal 2: SIGINT)")
    assert EventKind.EXCEPTION in kinds(
        "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)")
    assert EventKind.EXCEPTION in kinds("[Done] exited with code=1 in 2.35 seconds")
    assert EventKind.EXCEPTION in kinds("[Finished in 12.3s with exit code 1]")
    # exit 0 says the script returned: a completion, checked against the plan
    # (tests/parsing/test_exit_lines.py)
    assert kinds("Process finished with exit code 0") == {EventKind.COMPLETED}
    assert kinds("[Done] exited with code=0 in 2.35 seconds") == {EventKind.COMPLETED}


def test_every_ranks_training_time_summary_is_a_finished_run(tmp_path: Path):
    # bert_mpijob_32_ranks_tagged_per_process_training_time_throughput_summary_only.log
    text = "".join(f"[1,{r}]<stdout>:Process {r} - Training time: 10.0{r % 10} seconds\n"
                   f"[1,{r}]<stdout>:Process {r} - Throughput: 9.9{r % 10} samples/second\n"
                   for r in (31, 29, 28, 0))
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]


def test_a_per_epoch_training_time_then_more_training_is_no_end(tmp_path: Path):
    text = "".join(f"Epoch: [{e}]  [ 100/100]  loss: {2.0 - e * 0.1:.4f}  lr: 0.001\n"
                   f"Training time: 12.{e} seconds\n" for e in range(6))
    text += "Epoch: [6]  [ 100/100]  loss: 1.3000  lr: 0.001\n"
    assert once(tmp_path, text)["terminal_state"] == "RUNNING"


def test_a_metrics_json_row_with_eta_seconds_zero_is_the_plans_end(tmp_path: Path):
    # detectron2_metrics_json_lines_appended_launches_iter_restarts_final_1999_eta_0.log:
    # detectron2's JSONWriter rows, every 20 iterations, the last at max_iter - 1.
    rows = [f'{{"data_time": 0.0015, "eta_seconds": {(1999 - i) * 0.28:.1f}, '
            f'"iteration": {i}, "loss_cls": {0.5 - i / 5000:.4f}, "lr": 0.00025, '
            f'"total_loss": {2.0 - i / 1200:.4f}}}\n' for i in range(19, 2000, 20)]
    data = once(tmp_path, "".join(rows))
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    # the same file cut before the end is a live run
    assert once(tmp_path, "".join(rows[:60]))["terminal_state"] == "RUNNING"


def test_a_counter_restarted_by_a_relaunch_is_not_an_epochs():
    # paddleseg_encnet_cityscapes_workerlog0_relaunch_then_80000_of_80000_iters_flops_summary
    # .log: `epoch: 1, iter: 390/80000`, relaunched: `epoch: 1, iter: 10/80000` … then
    # `epoch: 2, iter: 380/80000`.
    counter = EpochCounter()
    for step in (10, 200, 390):
        assert not counter.observe(1.0, step)
    for step in (10, 200, 370):
        assert not counter.observe(1.0, step)
    assert not counter.observe(2.0, 380)
    assert not counter.per_epoch


def test_a_loop_that_stops_at_250_epochs_has_ended(tmp_path: Path):
    # minitorch_custom_autodiff_sentiment_250_epochs_three_line_blocks_val_best_77_then_drifts
    # .log: three-line blocks, the last at `Epoch 250`.
    text = "".join(f"Epoch {e}, loss {0.7 - e / 1000:.4f}, train accuracy: {55 + e / 10:.2f}%\n"
                   f"Validation accuracy: {60 + e % 7:.2f}%\n"
                   f"Best Valid accuracy: 77.00%\n" for e in range(1, 251))
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "ENDED"), data["summary"]


def test_one_rounds_keras_fit_seen_deep_in_its_loop_is_no_end(tmp_path: Path):
    # deepspell_keras1_iteration_165_one_epoch_fit_then_spelling_samples_running.log: the
    # outer loop's `Iteration 165`, then a `fit` of one epoch and printed samples.
    text = ("Iteration 165\nTrain on 1580553 samples, validate on 175618 samples\n"
            "Epoch 1/1\n1580553/1580553 [==============================] - 2413s - loss: "
            "0.0580 - acc: 0.9845 - val_loss: 0.2363 - val_acc: 0.9613\n"
            "Q rubber bullet fired by police...........\n"
            "A rubber bullet fired by police...........\n---\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "RUNNING"), \
        data["summary"]
    # the same call with the loop seen from its first round keeps its reading
    assert once(tmp_path, text.replace("Iteration 165", "Iteration 1"))["terminal_state"] \
        == "SUCCEEDED"


def _keras_epochs(headers: list[tuple[int, int]]) -> str:
    return "".join(f"Epoch {e}/{n}\n249/249 [==============================] - 19s - loss: "
                   f"{7e-5 - e * 1e-7:.4e} - acc: 0.2372 - val_loss: 1.6073e-04 - val_acc: "
                   f"0.2700\n" for e, n in headers)


def test_keras_fit_one_epoch_a_call_whose_total_moves_with_it_is_no_end(tmp_path: Path):
    # sealed-19's FCRN paste: `Epoch 118/118` … `Epoch 123/123`, each epoch a `fit` call
    # whose `initial_epoch` and `epochs` both moved on: each total is the call's
    data = once(tmp_path, _keras_epochs([(e, e) for e in range(118, 124)]))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    # a run whose header keeps its total reaches it
    data = once(tmp_path, _keras_epochs([(e, 123) for e in range(118, 124)]))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


# Marian (C++, marian-dev issue paste in sealed-9): its logger's error line, then the call
# stack; MindSpore's TBE compiler workers once the training process is gone (sealed-9).
_MARIAN_ABORT = ("[2019-08-14 21:29:53] Error: Error reading from file '.'\n"
                 "[2019-08-14 21:29:53] Error: Aborted from marian::io::InputFileStream& "
                 "marian::io::getline(marian::io::InputFileStream&, std::__cxx11::string&) "
                 "in src/common/file_stream.h:216\n\n[CALL STACK]\n[0x5cd0e2]\n")
_TBE_GONE = "[ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared!\n"


def test_an_error_line_saying_the_process_aborted_or_disappeared_is_a_failure(tmp_path: Path):
    for ending in (_MARIAN_ABORT, _TBE_GONE * 4):
        data = once(tmp_path, _epochs(20) + ending)
        assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO"), ending
        assert "crash" in {a["type"] for a in data["anomalies_detected"]}


def test_a_request_aborted_or_a_warning_that_a_process_exited_is_no_failure(tmp_path: Path):
    for line in ("2024-05-01 10:00:00 ERROR uploader: request aborted, retrying\n",
                 "[WARNING] ME(78923): The training process 70861 has exited, summary "
                 "process will exit.\n"):
        data = once(tmp_path, _epochs(20) + line + _epochs(30)[len(_epochs(20)):])
        assert data["terminal_state"] != "FAILED", line


# submitit on Slurm, preempted and requeued (sealed-7's submitit log): the banners say why
# the job's processes stop; the tasks' exit codes after them are that stop's.
_REQUEUE = ("submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on node7: this "
            "job is preempted.\n"
            "slurmstepd: error: *** JOB 608 ON node7 CANCELLED AT 2022-08-12T02:06:12 DUE TO "
            "JOB REQUEUE ***\n"
            "slurmstepd: error: *** STEP 608.0 ON node7 CANCELLED AT 2022-08-12T02:06:12 DUE TO "
            "JOB REQUEUE ***\n"
            "srun: error: node7: tasks 2-3: Exited with exit code 1\n")


def test_a_requeued_job_is_not_over_and_its_tasks_exits_are_no_crash(tmp_path: Path):
    data = once(tmp_path, _epochs(5) + _REQUEUE)
    assert (data["terminal_state"], data["decision"]) == ("RUNNING", "CONDITIONAL"), \
        data["summary"]
    types = {a["type"]: a["severity"] for a in data["anomalies_detected"]}
    assert types == {"job-failure": "low"}, types
    # Requeued into the same file (--open-mode=append): training goes on, then finishes.
    data = once(tmp_path, _epochs(5) + _REQUEUE + _epochs(8)[len(_epochs(5)):]
                + "Training completed.\n")
    assert data["terminal_state"] != "FAILED", data["summary"]
    assert "crash" not in {a["type"] for a in data["anomalies_detected"]}


def test_a_time_limit_still_ends_the_job(tmp_path: Path):
    data = once(tmp_path, _epochs(5) + _TIME_LIMIT + "\n")
    assert (data["terminal_state"], data["decision"]) == ("TIMEOUT", "NO-GO")


def test_a_log_of_closing_figures_only_is_go_but_not_with_high_confidence(tmp_path: Path):
    # mpirun's per-rank tags around each rank's closing lines (sealed-9's BERT MPIJob): the
    # run said it finished, but no step of its training, and no figure of how well the
    # model does (only timings and a throughput), was in view to judge.
    text = "".join(f"[1,{r}]<stdout>:Process {r} - Training time: 10.0{r % 10} seconds\n"
                   f"[1,{r}]<stdout>:Process {r} - Throughput: 9.9{r % 10} samples/second\n"
                   for r in range(8))
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    assert data["confidence"] == "low"
