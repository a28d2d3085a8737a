"""A crash is read as one whatever its shape (issue 23, sealed classes 2 and 3): a
traceback drawn in a box, a log written as UTF-16, a fatal error at start-up, a run
stopped by its user in the framework's own words, and a NaN said in words rather than
printed as a value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.test_endings import once


def _types(data: dict) -> set[str]:
    return {a["type"] for a in data["anomalies_detected"]}


def _steps(count: int, start: int = 1) -> str:
    return "".join(f"step {s} | loss {3.0 / (1 + s / 50):.4f} | lr 3.0e-04\n"
                   for s in range(start, start + count))


# rich.traceback (rich >= 13; what `rich.traceback.install()`, Typer and many CLIs
# print): a box whose title is the usual header, frames as `path:line in function`,
# source lines marked `❱`, and the exception line under the box.
RICH_TRACEBACK = """\
╭───────────────────── Traceback (most recent call last) ──────────────────────╮
│ /home/user/project/train.py:118 in <module>                                  │
│                                                                              │
│   115 │                                                                      │
│   116 │                                                                      │
│   117 if __name__ == "__main__":                                             │
│ ❱ 118 │   main()                                                             │
│   119                                                                        │
│                                                                              │
│ /home/user/project/train.py:97 in main                                       │
│                                                                              │
│    96 │   │   │   batch = {k: v.cuda() for k, v in batch.items()}            │
│ ❱  97 │   │   │   loss = model(**batch).loss                                 │
│    98 │   │   │   loss.backward()                                            │
╰──────────────────────────────────────────────────────────────────────────────╯
RuntimeError: CUDA error: device-side assert triggered
"""


def test_a_traceback_drawn_in_a_rich_box_is_a_crash(tmp_path: Path):
    data = once(tmp_path, _steps(40) + RICH_TRACEBACK)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    assert "device-side assert" in data["summary"] or "cuda-error" in _types(data)


def test_a_rich_traceback_with_an_ordinary_exception_names_it(tmp_path: Path):
    text = _steps(40) + RICH_TRACEBACK.replace(
        "RuntimeError: CUDA error: device-side assert triggered",
        "KeyError: 'labels'")
    data = once(tmp_path, text)
    assert data["terminal_state"] == "FAILED"
    assert "KeyError: 'labels'" in data["summary"]


def _utf16_log(tmp_path: Path, text: str, encoding: str) -> dict:
    """What PowerShell's `python train.py | Tee-Object train.log` (Windows PowerShell 5:
    UTF-16 LE with a BOM) or `> train.log` writes; `utf-16-le` without the BOM is what
    some Windows loggers write."""
    from dataclasses import replace

    from babysit.config import PollSettings, Settings
    from babysit.core.reports import NullObserver
    from babysit.core.session import run_session
    from babysit.targets.common.log_file import LocalLogTarget
    from tests.conftest import FakeClock, artifact_in

    log = tmp_path / "train.log"
    log.write_bytes(text.replace("\n", "\r\n").encode(encoding))
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), once=True), out_dir=tmp_path),
                NullObserver(), clock=FakeClock())
    return artifact_in(tmp_path)


def _tqdm(count: int, total: int = 500) -> str:
    # tqdm's bar glyphs (U+2588 and the eighths) are not ASCII: in UTF-16 their bytes
    # are not NUL-padded ASCII.
    return "".join(f"Training:  {100 * s // total:3d}%|{'█' * (s * 20 // total):<20}| {s}/{total} "
                   f"[00:{s // 10:02d}<01:00,  9.80it/s, loss={3.0 / (1 + s / 50):.3f}]\n"
                   for s in range(10, count + 1, 10))


def test_a_utf16_log_with_a_bom_is_read(tmp_path: Path):
    text = _tqdm(200) + RICH_TRACEBACK.replace(
        "RuntimeError: CUDA error: device-side assert triggered", "KeyError: 'labels'")
    data = _utf16_log(tmp_path, text, "utf-16")  # with the BOM
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    assert data["total_steps"] == 200
    assert "KeyError: 'labels'" in data["summary"]


def test_a_utf16_log_without_a_bom_is_read(tmp_path: Path):
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
            "    import apex\nModuleNotFoundError: No module named 'apex'\n")
    data = _utf16_log(tmp_path, _tqdm(300) + text, "utf-16-le")
    assert data["terminal_state"] == "FAILED", data["summary"]
    assert "apex" in data["summary"]


def test_a_utf16_big_endian_log_is_read(tmp_path: Path):
    data = _utf16_log(tmp_path, _tqdm(500) + "Training completed.\n", "utf-16-be")
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]


def test_an_import_error_at_start_up_is_a_crash(tmp_path: Path):
    # A wheel built against another torch: the import fails before anything runs, and
    # the log holds only the loader's message (stderr of `python -c`, or a launcher that
    # prints the worker's last line).
    text = ("[2024-03-02 10:11:12] launching: python train.py --config cfg.yaml\n"
            "ImportError: /opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-"
            "310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    assert "undefined symbol" in data["summary"]


def test_an_import_error_that_a_run_survives_is_no_crash(tmp_path: Path):
    text = ("ModuleNotFoundError: No module named 'apex'\n"
            "apex not found: using torch.cuda.amp\n" + _steps(30) + "Training completed.\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]


# coqui-ai/Trainer's console: its environment header, then STEP blocks.
_COQUI_TRAINING = (" > Training Environment:\n | > Current device: 0\n"
                   + "".join(f"   --> STEP: {s}/405 -- GLOBAL_STEP: {s}\n     | > loss: "
                             f"{1.5 - s / 500:.5f}  (1.45)\n" for s in range(25, 400, 25)))


def test_a_coqui_run_stopped_by_its_user_is_cancelled(tmp_path: Path):
    # coqui-ai/Trainer trainer.py `fit()`: `except KeyboardInterrupt:` logs
    # " > Keyboard interrupt detected." then remove_experiment_folder() prints
    # " ! Run is kept in <output_path>".
    text = (_COQUI_TRAINING
            + " > Keyboard interrupt detected.\n"
              " ! Run is kept in /content/run-December-01-2024_10+11AM-0000000\n")
    data = once(tmp_path, text)
    assert data["terminal_state"] == "CANCELLED", data["summary"]


def _espnet(reports: int, skips_after: int) -> str:
    # ESPnet2 trainer.py: a report line every 100 batches (`(trainer:732) INFO:
    # 1epoch:train:1-100batch: ... loss=..`), and `(trainer:657) WARNING: The grad norm
    # is nan. Skipping updating the model.` for each update it skips.
    lines = []
    for i in range(reports):
        lines.append(f"[gpu01] 2023-05-01 10:{i:02d}:00,000 (trainer:732) INFO: 1epoch:train:"
                     f"{i * 100 + 1}-{i * 100 + 100}batch: iter_time=1.2e-04, forward_time=0.150, "
                     f"loss_ctc={120 - i:.1f}, loss_att={80 - i:.1f}, acc=0.12, loss={92 - i:.1f}, "
                     f"optim0_lr0=1.000e-05, train_time=0.600")
        if i == 1:
            lines.append("[gpu01] 2023-05-01 10:01:30,000 (trainer:657) WARNING: The grad norm "
                         "is inf. Skipping updating the model.")
    lines += [f"[gpu01] 2023-05-01 11:00:{i % 60:02d},{i:03d} (trainer:657) WARNING: The grad "
              f"norm is nan. Skipping updating the model." for i in range(skips_after)]
    return "\n".join(lines) + "\n"


def test_updates_skipped_for_a_nan_gradient_until_the_end_are_a_nan(tmp_path: Path):
    data = once(tmp_path, _espnet(20, skips_after=40))
    assert "nan-inf" in _types(data), data["summary"]
    assert data["decision"] == "NO-GO"


def test_one_update_skipped_for_an_inf_gradient_is_routine(tmp_path: Path):
    data = once(tmp_path, _espnet(20, skips_after=0))
    assert "nan-inf" not in _types(data), data["summary"]


def test_detectron2_says_the_loss_became_nan_at_an_iteration(tmp_path: Path):
    # detectron2 engine/train_loop.py: the metrics line every 20 iterations, then the
    # FloatingPointError its `_write_metrics` raises.
    lines = [f"[12/01 10:{i // 60:02d}:{i % 60:02d} d2.utils.events]:  eta: 1:10:00  iter: {i}  "
             f"total_loss: {1.8 - i / 1000:.3f}  loss_cls: 0.5  time: 0.41  lr: 0.0025  "
             f"max_mem: 5012M" for i in range(19, 400, 20)]
    lines += ["ERROR [12/01 10:07:00 d2.engine.train_loop]: Exception during training:",
              "Traceback (most recent call last):",
              '  File "detectron2/engine/train_loop.py", line 149, in train',
              "    self.run_step()",
              "FloatingPointError: Loss became infinite or NaN at iteration=412!",
              "loss_dict = {'loss_cls': nan, 'loss_box_reg': 0.31}"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    nan = [a for a in data["anomalies_detected"] if a["type"] == "nan-inf"]
    assert nan and nan[0]["step"] == 412, data["anomalies_detected"]
    assert data["terminal_state"] == "FAILED"


def test_a_traceback_after_coqui_s_exit_banner_is_a_crash_even_cut_off(tmp_path: Path):
    # Mozilla/Coqui TTS prints " ! Run is kept in <dir>" on its way out of any exception;
    # only Ctrl-C's is not followed by a traceback.
    steps = "".join(f"   --> STEP: {s}/390 -- GLOBAL_STEP: {91000 + s}\n     | > loss: "
                    f"{0.4 - s / 10000:.5f}  (0.39)\n" for s in range(25, 350, 25))
    text = (steps + " ! Run is kept in /home/u/tts-output/ljspeech-July-08-2020_11+18AM-3366\n"
            "Traceback (most recent call last):\n"
            '  File "train.py", line 676, in <module>\n    main(args)\n'
            '  File "train.py", line 170, in train\n')
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    assert "crash" in _types(data)


@pytest.mark.parametrize("last, state", [
    ("ValueError: bad sample", "FAILED"),  # a whole traceback after the banner: a crash
    ("KeyboardInterrupt", "CANCELLED"),  # Ctrl-C's traceback: still the user's stop
])
def test_what_follows_coqui_s_exit_banner_decides(tmp_path: Path, last: str, state: str):
    text = (_COQUI_TRAINING
            + " ! Run is kept in /content/run-December-01-2024_10+11AM-0000000\n"
              "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
              f"{last}\n")
    data = once(tmp_path, text)
    assert data["terminal_state"] == state, data["summary"]
    if state == "FAILED":
        assert data["decision"] == "NO-GO"


def test_a_traceback_opening_after_the_exit_banner_is_a_crash_before_its_end_is_read():
    # Watched live, the lines up to a traceback's first frames may be all there is when
    # babysit confirms the failure: the banner alone would read as Ctrl-C.
    from babysit.core.lifecycle import RunLifecycle
    from babysit.model import EventKind, LogEvent, TerminalState

    lifecycle = RunLifecycle()
    lifecycle.on_step(91175, None)
    for kind, line, detail in (
            (EventKind.STOPPED_BY_SIGNAL, " ! Run is kept in /out/run-1", "Run is kept in"),
            (EventKind.TRACEBACK_START, "Traceback (most recent call last):", "")):
        lifecycle.on_event(LogEvent(kind, line, detail), 91175)
    ending = lifecycle.settle_from_log(step=91175, reached=False, confirm_pending=True,
                                       settled=True)
    assert ending is not None and ending.state is TerminalState.FAILED
    assert ending.anomaly is not None and ending.anomaly.type.value == "crash"
