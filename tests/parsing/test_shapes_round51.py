"""Shapes read since the fifty-first session, each on lines written in the real shape of a
public log babysit misread: a configuration printed as a JSON object, a run that prints
only its evaluations, a save's failure said in words, a Kaldi recipe's failed jobs."""

from __future__ import annotations

import json
from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.events import find_events
from tests.rules.test_loss_rules import verdict_of

_SETTINGS = {"coref": True, "bert_model_name": "roberta-large", "bert_cache_dir": None,
             "extra_bert": -3, "use_extra_bert": True, "multi_piece_strategy": "average",
             "bert_dropout": 0.5, "beam_size": 10, "batch_size": 10, "max_epoch": 6,
             "learning_rate": 0.001, "use_gpu": True, "gpu_device": 0}


def _scores(epoch: int) -> dict[str, object]:
    f = 0.5 + 0.04 * epoch
    return {"epoch": epoch,
            "dev": {"entity": {"prec": f + 0.01, "rec": f - 0.01, "f": f}},
            "test": {"entity": {"prec": f, "rec": f - 0.02, "f": f - 0.01}}}


def _oneie(epochs: int) -> list[str]:
    return [json.dumps(_SETTINGS), *(json.dumps(_scores(e)) for e in range(epochs))]


# -- a configuration as a JSON object; a run that prints only its evaluations ----------------

def test_a_json_object_of_settings_is_no_record(tmp_path: Path):
    """OneIE writes its configuration as one JSON object before its first epoch: flags
    (true, null) among its values, its planned epochs by name. Read as a record, its
    dropout and beam size were the run's figures and step 1 its progress."""
    artifact = verdict_of(tmp_path, _oneie(3))
    assert "bert_dropout" not in artifact["final_metrics"]
    assert "beam_size" not in artifact["final_metrics"]


def test_evaluations_alone_one_an_epoch_reach_the_plan(tmp_path: Path):
    """Every line after the settings is an epoch's evaluation (`{"epoch": 0, "dev": …}`),
    no training figure anywhere: its epochs are how far training went, and the last
    planned one (epoch 5 of 6, counted from 0) ends the run."""
    artifact = verdict_of(tmp_path, _oneie(6))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_the_same_evaluations_short_of_the_plan_run_on(tmp_path: Path):
    artifact = verdict_of(tmp_path, _oneie(4))
    assert artifact["terminal_state"] == "RUNNING"


def test_a_record_of_labels_and_times_stays_a_record():
    """PySlowFast's `json_stats` carry words (its type, its ETA, its memory), never flags:
    a record still."""
    from babysit.parsing.formats import parse_json_line

    line = ('json_stats: {"_type": "train_iter", "dt": 0.41, "epoch": "3/20", '
            '"eta": "1:02:03", "gpu_mem": "6.1G", "iter": "10/316", "loss": 2.31, "lr": 0.1}')
    parsed = parse_json_line(line)
    assert parsed is not None and parsed.metrics["loss"] == 2.31


# -- a save's failure said in words -----------------------------------------------------------

def test_a_model_save_that_failed_in_words_is_a_checkpoint_failure(tmp_path: Path):
    """A ChemBERTa distillation script catches the save's AttributeError and logs it:
    `ERROR:__main__:Error saving model: '…' object has no attribute 'save_pretrained'`.
    The training finished; its model was never written."""
    lines = [f"Epoch {e}/5: 100%|##########| 37/37 [00:04<00:00,  8.04it/s, loss={1 / e:.4f}]"
             for e in range(1, 6)]
    lines.append("ERROR:__main__:Error saving model: 'LoRASmallerChemBERTa' object has no "
                 "attribute 'save_pretrained'")
    artifact = verdict_of(tmp_path, lines)
    assert "checkpoint-failure" in {a["type"] for a in artifact["anomalies_detected"]}
    assert artifact["decision"] != "GO"


def test_a_model_card_that_was_not_saved_is_no_checkpoint():
    assert not find_events("Failed to save model card: connection reset")


# -- a Kaldi recipe's failed jobs -------------------------------------------------------------

def test_a_kaldi_job_wrapper_s_failed_jobs_fail_the_run(tmp_path: Path):
    """`run.pl: 1 / 8 failed, log is in …` is the wrapper's last word before it exits 1
    and the recipe stops on it (the error itself is in that log)."""
    lines = ["steps/nnet2/train_pnorm_fast.sh: Will train for 15 + 5 epochs, equalling",
             *(f"Training neural net (pass {k})" for k in range(4)),
             "run.pl: 1 / 8 failed, log is in exp/nnet2/log/train.3.*.log"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "FAILED")


def test_a_wrapper_s_words_for_one_job_and_for_none():
    failed = find_events("queue.pl: job failed with status 1, log is in exp/tri1/log/acc.1.log")
    assert [e.kind for e in failed] == [EventKind.EXCEPTION]
    assert not find_events("run.pl: 0 / 8 failed, log is in exp/nnet2/log/train.3.*.log")
