"""Runs that died in words babysit did not read, left RUNNING (issue 23, item 4, sealed-12):
a kill said by the shell in its locale, a Lua traceback, two processes' tracebacks
interleaved. Each is FAILED with its crash named; and the reverse: a traceback that
training survived ends nothing. The lines are the logs' own shapes (cited per test)."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_endings import once


def _verdict(data: dict) -> tuple[str, str]:
    return data["decision"], data["terminal_state"]


def _types(data: dict) -> set[str]:
    return {a["type"] for a in data["anomalies_detected"]}


# DreamerV3's own metric printer (embodied), one report per logging interval.
_DREAMER = ("episode/score 0.1 / episode/length 34 / train/loss/con 0.04 / train/loss/dyn 5.41 / "
            "train/loss/image 61.08 / train/loss/policy 9.3e-3 / fps/train 1253.7\n"
            "Writing metrics: /home/u/logdir/dreamer/20251205T175323/metrics.jsonl\n")


def test_a_kill_said_in_the_shell_s_chinese_is_a_crash(tmp_path: Path) -> None:
    # dreamerv3_jax_slash_separated_metrics_then_chinese_killed.log (sealed-12): bash under
    # zh_CN reports the SIGKILL of its job as `已杀死` (glibc's `Killed`).
    data = once(tmp_path, _DREAMER + "已杀死\n")
    assert _verdict(data) == ("NO-GO", "FAILED"), data["summary"]
    assert "crash" in _types(data)


def test_a_segfault_said_in_german_by_a_script_s_shell_is_a_crash(tmp_path: Path) -> None:
    # bash running `run.sh` under de_DE: `line %d: ` is `Zeile %d: `, the signal
    # `Speicherzugriffsfehler`, the core dump `(Speicherabzug geschrieben)`.
    data = once(tmp_path, _DREAMER + "./run.sh: Zeile 3: 48213 Speicherzugriffsfehler "
                          "(Speicherabzug geschrieben) python train.py\n")
    assert _verdict(data) == ("NO-GO", "FAILED"), data["summary"]


def test_a_stop_word_alone_is_no_signal_and_the_run_is_not_failed(tmp_path: Path) -> None:
    # `Beendet` (de) is bash's `Terminated` only after a job number or a script's line;
    # alone it is the run's own "finished".
    data = once(tmp_path, _DREAMER * 3 + "Beendet\n")
    assert data["terminal_state"] != "FAILED", data["summary"]
    assert "crash" not in _types(data)


# karpathy/char-rnn under Torch7 (train.lua): validation progress, the save, then
# luajit's uncaught error and Lua's `stack traceback:` with tab-indented frames
# (lua_torch7_char_rnn_validation_then_checkpoint_save_cannot_open_luajit_traceback.log).
_CHAR_RNN_SAVE = (
    "22/23...\t\n23/23...\t\nsaving checkpoint to cv/lm_lstm_epoch2.36_1.7848.t7\t\n")
_LUA_FRAMES = ("stack traceback:\n\t[C]: at 0x7f6baa9c8750\n\t[C]: in function 'DiskFile'\n"
               "\t/home/mwr/torch/install/share/lua/5.1/torch/File.lua:301: in function 'save'\n"
               "\ttrain.lua:338: in main chunk\n\t[C]: in function 'dofile'\n")


def test_luajit_s_error_at_a_save_is_a_crash_and_a_failed_checkpoint(tmp_path: Path) -> None:
    data = once(tmp_path, _CHAR_RNN_SAVE
                + "/home/mwr/torch/install/bin/luajit: cannot open <cv/lm_lstm_epoch2.36_1.7848.t7>"
                  " in mode  w at /home/mwr/torch/pkg/torch/lib/TH/THDiskFile.c:484\n"
                + _LUA_FRAMES)
    assert _verdict(data) == ("NO-GO", "FAILED"), data["summary"]
    assert {"crash", "checkpoint-failure"} <= _types(data)


def test_a_stack_traceback_under_any_message_is_the_lua_error(tmp_path: Path) -> None:
    # The message a handler printed (no interpreter's name before it): `stack traceback:`
    # says whose error it is.
    data = once(tmp_path, "1/2000 (epoch 0.005), train_loss = 4.1945, grad/param norm = 5.6e-01\n"
                          "2/2000 (epoch 0.010), train_loss = 4.1001, grad/param norm = 5.1e-01\n"
                          "./util/OneHot.lua:17: bad argument #1 to 'index' (out of range)\n"
                + _LUA_FRAMES)
    assert _verdict(data) == ("NO-GO", "FAILED"), data["summary"]
    assert any("OneHot.lua:17" in a["description"] for a in data["anomalies_detected"])


def test_a_lua_traceback_the_loop_survived_ends_nothing(tmp_path: Path) -> None:
    # `xpcall(step, debug.traceback)` printed and the loop went on, its steps rising.
    def records(start: int, stop: int) -> str:
        return "".join(f"iter {i} | loss {4.2 - i * 0.01:.4f} | lr 2.0e-03\n"
                       for i in range(start, stop))
    data = once(tmp_path, records(1, 40) + "bad batch, skipped\n" + _LUA_FRAMES + records(40, 80))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert not [a for a in data["anomalies_detected"]
                if a["type"] == "crash" and "resolved" not in a["description"]]


# vqdang/hover_net's run_train.py on Windows cmd (sealed-12): the bar at 0/82, then the
# parent's traceback and the spawned DataLoader worker's (multiprocessing/spawn.py)
# written at once; one's indentation lands before the other's frame, `trainer.run()`
# loses its own.
_HOVERNET = (
    "----------------EPOCH 1\n"
    "Processing: |          | 0/82[00:00<?,?it/s]Batch = nan|EMA = nanTraceback (most recent "
    "call last):\n"
    '  File "<string>", line 1, in <module>\n'
    "Traceback (most recent call last):\n"
    '  File "C:\\Users\\me\\anaconda3\\envs\\hovernet\\lib\\multiprocessing\\spawn.py", line 105, '
    "in spawn_main\n"
    '  File "run_train.py", line 305, in <module>\n'
    "    exitcode = _main(fd)\n"
    '      File "C:\\Users\\me\\anaconda3\\envs\\hovernet\\lib\\multiprocessing\\spawn.py", '
    "line 114, in _main\n"
    "trainer.run()\n"
    '  File "run_train.py", line 289, in run\n')


def test_interleaved_spawn_tracebacks_cut_off_are_a_crash(tmp_path: Path) -> None:
    data = once(tmp_path, _HOVERNET)
    assert _verdict(data) == ("NO-GO", "FAILED"), data["summary"]
    assert "crash" in _types(data)
    assert "nan-inf" not in _types(data)  # `Batch = nan` is the bar's placeholder


def test_training_after_a_cut_traceback_still_goes_on(tmp_path: Path) -> None:
    # A frame, then a training record (not a line of code): the traceback was abandoned.
    records = "".join(f"epoch 1 step {i} loss {2.0 - i * 0.01:.3f}\n" for i in range(1, 30))
    more = "".join(f"epoch 1 step {i} loss {2.0 - i * 0.01:.3f}\n" for i in range(30, 60))
    data = once(tmp_path, records + "Traceback (most recent call last):\n"
                                    '  File "train.py", line 12, in <module>\n' + more)
    assert data["terminal_state"] == "RUNNING", data["summary"]
