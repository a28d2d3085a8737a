"""Finished runs whose evidence babysit did not read before: the tail of a
run that says it finished and saved its model, the checkpoint said in the run's own
words. Lines quoted from the public logs named in each test."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_endings import once

# The tail of google-deepmind/jax_privacy's jaxline run
# (tests/fixtures/logs/public/sealed-3/jax_privacy_jaxline_cifar10_finished.log).
_JAXLINE_TAIL = (
    "I0401 12:17:29.953248 23210343319296 utils.py:306] [jaxline] training loop finished.\n"
    "I0401 12:17:29.955536 23210343319296 utils.py:299] [jaxline] final checkpoint starting...\n"
    "I0401 12:17:29.955831 23210343319296 utils.py:578] Saved checkpoint latest with id 2.\n"
    "I0401 12:17:29.955891 23210343319296 utils.py:306] [jaxline] final checkpoint finished.\n"
    "I0401 12:17:34.301443 23214846677760 dataset_info.py:565] Load dataset info from "
    "/cluster/home/tensorflow_datasets/cifar10/3.0.2\n")


def test_a_tail_that_says_training_finished_and_saved_its_checkpoint_is_not_go(
        tmp_path: Path):
    """No step and no metric, but the run's own completion line and the checkpoint it
    saved: SUCCEEDED on that evidence, the checkpoint named, yet never GO on a log babysit
    could not read (issue 23: a run babysit cannot read is never GO)."""
    data = once(tmp_path, _JAXLINE_TAIL)
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "SUCCEEDED"), \
        data["summary"]
    assert "could not read training progress" in data["summary"]
    assert data["best_checkpoint"] == "latest"


def test_a_completion_line_without_a_saved_checkpoint_stays_unread(tmp_path: Path):
    """The completion line alone (the checkpoint line removed) is still "could not read"."""
    text = "".join(line + "\n" for line in _JAXLINE_TAIL.splitlines() if "Saved" not in line)
    data = once(tmp_path, text)
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert "could not read training progress" in data["summary"]


def test_a_checkpoint_without_a_completion_line_is_no_end(tmp_path: Path):
    """A save is no ending: a run that saved and says nothing more is not GO."""
    text = "".join(line + "\n" for line in _JAXLINE_TAIL.splitlines()
                   if "training loop finished" not in line)
    data = once(tmp_path, text)
    assert data["decision"] != "GO", data["summary"]


def test_ray_trains_checkpoint_line_names_its_path(tmp_path: Path):
    """Ray Train 2.7 (GokuMohandas/Made-With-ML, sealed-5's
    made_with_ml_ray_train_notebook_10_checkpoints_total_run_time.log)."""
    from babysit.parsing.events import find_events
    line = ("(RayTrainWorker pid=727834, ip=10.0.34.101) Checkpoint successfully created at: "
            "Checkpoint(filesystem=local, path=/efs/llm/TorchTrainer_1a81f_00000_0/"
            "checkpoint_000009)")
    saved = [e.detail for e in find_events(line) if e.kind.name == "CHECKPOINT_SAVED"]
    assert saved == ["/efs/llm/TorchTrainer_1a81f_00000_0/checkpoint_000009"]
