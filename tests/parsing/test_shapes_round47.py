"""Shapes read since the forty-seventh session, each on lines written in the real shape of
a public log (sealed-156 and sealed-157, each scored blind first)."""

from __future__ import annotations

from pathlib import Path

from tests.parsing.test_shapes_round44 import _open
from tests.rules.test_loss_rules import verdict_of

# -- a notebook's coloured traceback through a folder whose name has spaces -------------

_RED, _GREEN, _CYAN, _BLUE, _OFF = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0;36m", "\x1b[0;34m", "\x1b[0m"


def _ipython_frame(path: str, function: str, line_no: int, code: str) -> list[str]:
    return [f"{_GREEN}{path}{_OFF} in {_CYAN}{function}{_BLUE}(){_OFF}",
            f"{_GREEN}---> {line_no}{_RED}     {_OFF}{code}{_OFF}", ""]


def _epoch_line(epoch: int) -> str:
    return (f"Epoch # {epoch:2d} ............... train-loss = {0.07 - epoch / 1000:.4g}"
            f"\tvalid-loss = {0.05 - epoch / 2000:.4g}\tTrainTime = 5700.1s")


def test_a_notebook_traceback_through_a_spaced_folder_and_compiled_frames_is_a_crash(
        tmp_path: Path):
    """Colab's Drive folders carry spaces (`/content/drive/MyDrive/2022 FastMRI/…`), and
    h5py's frames are `.pyx` files: each is a frame's head, not training output that ends
    the traceback. The exception's message then runs on to a second line."""
    lines = [_epoch_line(epoch) for epoch in range(3)]
    lines += [f"{_RED}{'-' * 75}{_OFF}",
              f"{_RED}OSError{_OFF}                                   Traceback (most recent "
              "call last)",
              *_ipython_frame("<ipython-input-3-1f2e>", "<module>", 4, "train(args)"),
              *_ipython_frame("/content/drive/MyDrive/2022 FastMRI/varnet/utils/train_part.py",
                              "train", 92, "train_loss, train_time = train_epoch(args)"),
              *_ipython_frame("h5py/_objects.pyx", "h5py._objects.with_phil.wrapper", 0, ""),
              *_ipython_frame("/usr/local/lib/python3.7/dist-packages/h5py/_hl/dataset.py",
                              "__getitem__", 787, "self.id.read(mspace, fspace, arr)"),
              f"{_RED}OSError{_OFF}: Can't read data (file read failed: time = Sat Aug  6 "
              "11:29:06 2022",
              ", filename = '/content/drive/Shareddrives/2022 FastMRI/train/brain101.h5', "
              "errno = 5, error message = 'Input/output error')"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    assert ("crash", "blocker") in _open(artifact)
    assert "OSError" in artifact["summary"]


# -- the plan as a configuration dict quotes it -------------------------------------------

def _opengait_lines(last: int) -> list[str]:
    head = ["[2025-10-01 13:40:04] [INFO]: {'enable_float16': True, 'log_iter': 100, "
            "'restore_hint': 0, 'save_iter': 400, 'save_name': 'GaitGL', 'sync_BN': True, "
            "'total_iter': 800, 'sampler': {'batch_size': [8, 8], 'type': 'TripletSampler'}}"]
    return head + [f"[2025-10-01 13:{40 + n // 100:02d}:05] [INFO]: Iteration {n:05d}, Cost "
                   f"25.10s, triplet_loss={1.5 - n / 2000:.4f}, softmax_loss="
                   f"{0.9 - n / 2000:.4f}, softmax_accuracy={0.5 + n / 2000:.4f}"
                   for n in range(100, last + 1, 100)]


def test_a_quoted_total_of_iterations_in_a_configuration_dict_is_the_plan(tmp_path: Path):
    artifact = verdict_of(tmp_path, _opengait_lines(800))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    (tmp_path / "short").mkdir()
    short = verdict_of(tmp_path / "short", _opengait_lines(500))
    assert short["terminal_state"] != "SUCCEEDED"


# -- a status box that gives the row's share of the plan -----------------------------------

_XLEARN_HEAD = "                   Epoch      Train log_loss     Time cost (sec)"


def _xlearn_rows(last: int, loss: str) -> list[str]:
    return [_XLEARN_HEAD] + [f"[  {10 * e:3d}%      ]    {e:2d}                 {loss}"
                             f"                0.20" for e in range(1, last + 1)]


def test_a_percentage_box_gives_the_planned_epochs(tmp_path: Path):
    """xLearn's `[ 80% ] 8`: the eighth of ten epochs. At `[ 100% ]` the plan is done."""
    done = verdict_of(tmp_path, _xlearn_rows(10, "nan"))
    assert done["terminal_state"] == "SUCCEEDED"
    assert done["decision"] == "NO-GO"  # every epoch's loss is NaN
    assert ("nan-inf", "blocker") in _open(done)
    (tmp_path / "cut").mkdir()
    cut = verdict_of(tmp_path / "cut", _xlearn_rows(6, "0.5123"))
    assert cut["terminal_state"] == "RUNNING"
