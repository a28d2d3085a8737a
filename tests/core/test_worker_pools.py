"""gensim's word-vector trainers print no loss and no step: their worker pool's own lines
are the progress, and its last worker done (or the closing totals) the end
(babysit/parsing/worker_pools.py). The lines are gensim's shapes, rebuilt small: before
3.3 one pool runs every epoch (sealed-14's HoloClean FastText paste), from 3.3 on one
pool an epoch, each followed by the epoch's report."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_endings import once

_W2V = "INFO:gensim.models.word2vec:"
_DEBUG = "DEBUG:gensim.models.word2vec:"


def _pool(workers: int = 3, finished: int = 3) -> list[str]:
    lines = [f"{_DEBUG}queueing job #0 (400 words, 400 sentences) at alpha 0.02500",
             f"{_DEBUG}job loop exiting, total 1 jobs"]
    for done in range(1, finished + 1):
        lines += [f"{_DEBUG}worker exiting, processed 1 jobs",
                  f"{_W2V}worker thread finished; awaiting finish of {workers - done} more "
                  f"threads"]
    return lines


def _start() -> list[str]:
    return [f"{_W2V}resetting layer weights",
            f"{_W2V}training model with 3 workers on 40 vocabulary and 8 features, using "
            f"sg=0 hs=0 sample=0.001 negative=5 window=5"]


def _verdict(data: dict) -> tuple[str, str]:
    return data["decision"], data["terminal_state"]


def test_the_last_worker_of_a_one_pool_fit_done_succeeded(tmp_path: Path):
    data = once(tmp_path, "\n".join(_start() + _pool()) + "\n")
    assert _verdict(data) == ("GO", "SUCCEEDED")


def test_a_pool_still_waiting_on_a_worker_is_running(tmp_path: Path):
    data = once(tmp_path, "\n".join(_start() + _pool(finished=2)) + "\n")
    assert _verdict(data) == ("CONDITIONAL", "RUNNING")


def _epoch_report(epoch: int) -> str:
    return (f"{_W2V}EPOCH - {epoch} : training on 80 raw words (30 effective words) took "
            f"0.0s, 9000 effective words/s")


def test_an_epochs_pool_done_and_the_next_epoch_under_way_is_running(tmp_path: Path):
    lines = _start() + _pool() + [_epoch_report(1),
                                  f"{_W2V}EPOCH 2 - PROGRESS: at 40.00% examples, 9000 "
                                  f"words/s, in_qsize 5, out_qsize 0"]
    assert _verdict(once(tmp_path, "\n".join(lines) + "\n")) == ("CONDITIONAL", "RUNNING")


def test_the_epochs_then_the_closing_totals_succeeded(tmp_path: Path):
    lines = _start() + _pool() + [_epoch_report(1)] + _pool() + [_epoch_report(2)] + [
        f"{_W2V}training on a 160 raw words (60 effective words) took 0.1s, 900 effective "
        f"words/s"]
    assert _verdict(once(tmp_path, "\n".join(lines) + "\n")) == ("GO", "SUCCEEDED")


def test_an_epochs_report_alone_is_no_end(tmp_path: Path):
    lines = _start() + _pool() + [_epoch_report(1)]
    assert _verdict(once(tmp_path, "\n".join(lines) + "\n")) == ("CONDITIONAL", "RUNNING")
