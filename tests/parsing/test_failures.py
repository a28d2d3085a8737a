"""A failure read whatever its shape (issue 23, class: missed crashes): tracebacks behind
a changing prefix, without a header, wrapped by a shell or a narrow console, cut short
under an IPython header; command lines refused before the script starts; and a new
launch seen after a failure in the same log (parsing.launches)."""

from __future__ import annotations

from babysit.model import EventKind, LogEvent
from babysit.parsing.failures import CUT_OFF
from babysit.parsing.parser import LogParser


def _events(*lines: str) -> list[LogEvent]:
    parser = LogParser()
    found = [e for line in lines if (r := parser.feed(line)) is not None for e in r.events]
    return found + [e for r in parser.finish() for e in r.events]


def _exceptions(*lines: str) -> list[str]:
    return [e.detail for e in _events(*lines) if e.kind is EventKind.EXCEPTION]


def test_a_traceback_behind_a_prefix_whose_timestamp_changes_closes():
    stamp = "2024-05-0{} 10:00:0{}.{}12 [42/train/7 (pid 3188)] [task-a1] "
    lines = [stamp.format(1, 1, 1) + "Traceback (most recent call last):",
             stamp.format(1, 2, 3) + '  File "/opt/torch/serialization.py", line 379, in save',
             stamp.format(1, 2, 4) + "    _save(obj, opened_zipfile)",
             stamp.format(1, 3, 9) + "OSError: [Errno 28] No space left on device"]
    assert _exceptions(*lines) == ["OSError: [Errno 28] No space left on device"]


def test_a_traceback_behind_a_logger_level_and_time_closes():
    lines = ["12:01:07 ERROR  Traceback (most recent call last):",
             '12:01:07 ERROR    File "train.py", line 88, in <module>',
             "12:01:08 ERROR      main(cfg)",
             "12:01:08 ERROR  KeyError: 'labels'"]
    assert _exceptions(*lines) == ["KeyError: 'labels'"]


def test_frames_without_a_header_still_end_in_their_exception():
    # A paste that starts mid-traceback, its indentation lost.
    lines = ['File "/content/utils/loss.py", line 403, in compute_loss',
             "    lobj += BCEobj(pi[..., 4], tobj)",
             '  File "/usr/lib/python3/torch/nn/functional.py", line 2540, in bce',
             "    return torch.bce(input, target)",
             "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB"]
    assert _exceptions(*lines) == ["RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB"]


def test_the_base_exception_raised_bare_closes_its_traceback():
    # torch.multiprocessing's spawn, a worker killed by the kernel (sealed-20's HigherHRNet)
    lines = ["Traceback (most recent call last):",
             '  File "/usr/lib/torch/multiprocessing/spawn.py", line 107, in join',
             "    (error_index, name)",
             "Exception: process 1 terminated with signal SIGKILL",
             "/usr/lib/python3.6/multiprocessing/semaphore_tracker.py:143: UserWarning: "
             "semaphore_tracker: There appear to be 20 leaked semaphores"]
    assert _exceptions(*lines) == ["Exception: process 1 terminated with signal SIGKILL"]


def test_a_traceback_pasted_through_markdown_still_closes():
    # sealed-20's YOLOX issue: indentation gone, typographic quotes, `in <module>` taken
    # for a tag, each frame's first line of a call continued below
    lines = ["Traceback (most recent call last):",
             "File “/opt/conda/lib/python3.9/runpy.py”, line 197, in _run_module_as_main",
             "return _run_code(code, main_globals, None,",
             "File “/workspace/tools/train.py”, line 191, in",
             "launch(",
             "File “/opt/conda/lib/python3.9/site-packages/torch/multiprocessing/spawn.py”, "
             "line 140, in join",
             "raise ProcessExitedException(",
             "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with "
             "signal SIGKILL"]
    assert _exceptions(*lines) == ["torch.multiprocessing.spawn.ProcessExitedException: "
                                   "process 0 terminated with signal SIGKILL"]


def test_training_output_after_a_frame_still_abandons_the_traceback():
    lines = ["Traceback (most recent call last):",
             '  File "train.py", line 10, in <module>',
             "Epoch 3 (",
             "epoch 4 loss 0.5"]
    assert _exceptions(*lines) == []


def test_a_header_wrapped_in_a_powershell_error_record_then_wrapped_frames():
    lines = ["Epoch data ready: 4096 samples",
             r"C:\env\Scripts\python.exe : Traceback (most recent call last):",
             "At line:1 char:1",
             r"+ C:\env\Scripts\python.exe train.py 2>&1 | Tee-Object log.txt",
             "+ ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
             "    + CategoryInfo          : NotSpecified: (Traceback (most recent call "
             "last):String) [], RemoteException",
             "    + FullyQualifiedErrorId : NativeCommandError",
             " ",
             '  File "C:\\Users\\someone\\Documents\\projects\\traffic\\code\\',
             'train.py", line 99, in <module>',
             "    print(f\"\\u2713 ready\")",
             r'  File "C:\Python313\Lib\encodings\cp1252.py", line 19, in encode',
             "    return codecs.charmap_encode(input,self.errors,encoding_table)[0]",
             "UnicodeEncodeError: 'charmap' codec can't encode character '\\u2713' in "]
    [detail] = _exceptions(*lines)
    assert detail.startswith("UnicodeEncodeError: 'charmap' codec")


def test_an_ipython_traceback_cut_short_says_the_exception_its_header_names():
    lines = ["Output exceeds the size limit. Open the full output data in a text editor",
             "-" * 75,
             "KeyboardInterrupt                         Traceback (most recent call last)",
             r"~\AppData\Local\Temp\ipykernel_1302\419832.py in <module>",
             "----> 1 learn.fit_one_cycle(25, lr_max=1e-3)",
             "      2 learn.save('stage1')",
             ""]
    [detail] = _exceptions(*lines)
    assert detail == f"KeyboardInterrupt ({CUT_OFF})"


def test_a_traceback_a_library_logged_as_a_warning_is_not_a_failure():
    lines = ["2024-01-01 10:00:00 WARNING retrying upload: Traceback (most recent call last):",
             '  File "/lib/uploader.py", line 12, in send',
             "    conn.send(blob)",
             "ConnectionResetError: [Errno 104] Connection reset by peer",
             "step 41 | loss 2.10"]
    assert _exceptions(*lines) == []


def test_frames_printed_without_an_exception_are_not_a_crash_at_the_end():
    # `traceback.print_stack()` or a logger's stack_info: frames, then the log stops.
    lines = ["step 10 | loss 2.5", "Stack (most recent call last):",
             '  File "train.py", line 10, in <module>', "    log_stack()"]
    assert _exceptions(*lines) == []


def test_argparse_refusing_the_command_line_is_a_failure():
    lines = ["usage: train.py [-h] [--config CONFIG] [--lr LR]",
             "                [--epochs EPOCHS] [--batch-size BATCH_SIZE]",
             "train.py: error: the following arguments are required: --config"]
    [detail] = _exceptions(*lines)
    assert detail.startswith("train.py: error: the following arguments are required")


def test_argparse_error_with_a_blank_message_under_a_long_usage_text():
    usage = ["usage: finetune_lm [-h] [--model MODEL]"] + [
        f"                   [--option-{i} OPTION_{i}]" for i in range(150)]
    [detail] = _exceptions(*usage, "finetune_lm: error: unrecognized arguments:  ")
    assert detail.startswith("finetune_lm: error: unrecognized arguments")


def test_click_refusing_an_option_is_a_failure():
    lines = ["Usage: train [OPTIONS] CONFIG", "Try 'train --help' for help.", "",
             "Error: No such option: --learning-rate Did you mean --lr?"]
    [detail] = _exceptions(*lines)
    assert "No such option: --learning-rate" in detail


def test_an_error_line_in_the_runs_own_words_after_training_is_no_usage_error():
    lines = [f"step {s} | loss {2 / s:.3f}" for s in range(1, 20)]
    lines.append("eval.py: error: 3 samples had no label, skipped")
    assert _exceptions(*lines) == []


def _launch(model: str) -> list[str]:
    return [f"[2024-03-01 09:00:0{len(model) % 10}] args: Namespace(model='{model}', "
            f"data='coco', resume=False)",
            "[2024-03-01 09:00:01] building the model and the optimizer",
            "[2024-03-01 09:00:02] loading annotations into memory...",
            "[2024-03-01 09:00:03] loading annotations into memory..."]


def _kinds(*lines: str) -> list[EventKind]:
    return [e.kind for e in _events(*lines)]


def test_the_preamble_printed_again_after_a_failure_is_a_new_launch():
    lines = [*_launch("resnet50"), "Traceback (most recent call last):",
             '  File "train.py", line 3, in <module>', "ValueError: num_workers must be >= 0",
             *_launch("resnet18"), "epoch 1 iter 10/1849 loss 16.4"]
    kinds = _kinds(*lines)
    assert kinds.count(EventKind.LAUNCHED) == 1
    assert kinds.index(EventKind.LAUNCHED) > kinds.index(EventKind.EXCEPTION)


def test_the_preamble_printed_again_without_a_failure_is_no_launch_event():
    lines = [*_launch("resnet50"), "epoch 1 iter 10/100 loss 3.0", *_launch("resnet18"),
             "epoch 1 iter 10/100 loss 2.9"]
    assert EventKind.LAUNCHED not in _kinds(*lines)


def test_a_line_the_preamble_repeats_or_a_training_line_marks_no_launch():
    # The dataset loader prints at start-up and again for each evaluation; a training
    # record after a failure is the run going on, not a start-up.
    lines = [*_launch("resnet50"), "epoch 1 iter 10/100 loss 3.0", "epoch 1 iter 20/100 loss 2.9",
             "RuntimeError: CUDA error: an illegal memory access was encountered",
             "[2024-03-01 09:10:02] loading annotations into memory...",
             "epoch 1 iter 20/100 loss 2.9"]
    kinds = _kinds(*lines)
    assert EventKind.CUDA_ERROR in kinds and EventKind.LAUNCHED not in kinds


def test_a_scripts_logger_saying_training_failed_is_a_failure():
    assert _exceptions("2024-06-01 10:00:01,220 - __main__ - ERROR - Training failed with "
                       "error: mat1 and mat2 shapes cannot be multiplied (8x512 and 768x256)") \
        == ["Training failed with error: mat1 and mat2 shapes cannot be multiplied "
            "(8x512 and 768x256)"]
    assert _exceptions("[12:00:00] CRITICAL trial lr_0.01 failed: worker died") \
        == ["trial lr_0.01 failed: worker died"]
    assert _exceptions("ERROR:torch.distributed.elastic.multiprocessing.api:failed "
                       "(exitcode: 1) local_rank: 0 (pid: 4242) of binary: /usr/bin/python")


def test_a_runners_word_that_the_job_it_ran_raised_is_a_failure():
    # Hydra's run_and_report, when the task function raises (sealed-12 mapanything: the
    # last line of the log, no traceback after it)
    assert _exceptions("[2025-10-31 05:07:11,062][__main__][ERROR] - Error executing job with "
                       "overrides: ['machine=hpc_train', 'loss=gs_loss']") \
        == ["Error executing job with overrides: ['machine=hpc_train', 'loss=gs_loss']"]
    assert _exceptions("Error executing job with overrides: []") \
        == ["Error executing job with overrides: []"]
    # not at error level, and not at the line's start: a sentence about it
    assert _exceptions("INFO see the docs on what an Error executing job means") == []


def test_an_error_line_that_is_not_about_training_failing_is_none():
    assert _exceptions("2024-06-01 10:00:01 ERROR upload of metrics failed, retrying") == []
    assert _exceptions("2024-06-01 10:00:01 INFO Training failed runs are listed below") == []
    assert _exceptions("2024-06-01 10:00:01 ERROR run failed to sync metrics, retrying") == []


def test_tensorflows_coordinator_reporting_the_error_that_stops_training():
    [detail] = _exceptions(
        "INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework."
        "errors_impl.InvalidArgumentError'>, LossTensor is inf or nan. : Tensor had NaN values")
    assert detail.startswith("InvalidArgumentError: LossTensor is inf or nan")


def test_training_stopped_because_its_values_went_bad_is_a_failure():
    assert _exceptions("  5/120 [>....] - ETA: 1:02 - loss: 3.1Batch 5: Invalid loss, "
                       "terminating training")
    assert _exceptions("WARNING: the loss is NaN at every step of this epoch; training "
                       "was stopped at epoch 3")
    assert _exceptions("Stopping training: no improvement for 10 epochs") == []


def test_an_exception_line_the_log_ends_on_is_a_failure_and_one_followed_by_more_is_not():
    last = "tensorflow.python.training.basic_session_run_hooks.NanLossDuringTrainingError: " \
           "NaN loss during training."
    # Said once: as the NaN guard that ended training (parsing.nonfinite_words).
    assert _exceptions("INFO:tensorflow:Saving checkpoints for 0", last, "") == [
        "training ended on a non-finite value: tensorflow.python.training."
        "basic_session_run_hooks.NanLossDuringTrainingError: NaN loss during training."]
    plain = "RuntimeError: the data loader could not open shard 12"
    assert _exceptions("INFO: epoch 3 started", plain, "") == [plain]
    assert _exceptions(plain, "step 1 | loss 2.30") == []
    assert _exceptions("step 1 | loss 2.30", "UserWarning: the epoch ended early") == []


def test_a_kernel_assert_a_console_wrapped_is_a_cuda_error():
    kinds = _kinds("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex:"
                   " block: [31,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize`",
                   "failed.")
    assert EventKind.CUDA_ERROR in kinds


def test_tracebacks_of_threads_are_not_the_process_ending():
    # Two writer threads torn down at exit, their tracebacks interleaved line by line.
    frames = ['  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner',
              "    self.run()",
              '  File "/usr/lib/python3.10/multiprocessing/connection.py", line 136, in check',
              '    raise OSError("handle is closed")']
    lines = ["Exception in thread Thread-1:", "Exception in thread Thread-3:", "",
             "End training....", "Traceback (most recent call last):",
             "Traceback (most recent call last):"]
    for frame in frames:
        lines += [frame, frame]
    lines += ["OSError: handle is closed", '    raise OSError("handle is closed")',
              "OSError: handle is closed"]
    assert _exceptions(*lines) == []


def test_a_traceback_after_a_threads_is_the_processs_own():
    lines = ["Exception ignored in: <function Pool.__del__ at 0x7f>",
             "Traceback (most recent call last):", '  File "pool.py", line 3, in __del__',
             "ValueError: pool not running", "step 7 | loss 1.2",
             "Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
             "KeyError: 'labels'"]
    assert _exceptions(*lines) == ["KeyError: 'labels'"]


def test_a_save_frame_a_console_wrapped_still_marks_a_failed_save():
    kinds = _kinds("Epoch 1 take 6133.4", "Traceback (most recent call last):",
                   '  File "/usr/lib/python3.8/site-packages/torch/serialization.py", line 379,',
                   " in save",
                   "    _save(obj, opened_zipfile, pickle_module, pickle_protocol)")
    assert EventKind.CHECKPOINT_ERROR in kinds
