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


def test_a_recipe_script_s_name_is_no_metric(tmp_path: Path):
    """`steps/nnet2/train_pnorm_fast.sh: 30 + 10 = 40 iterations,` is the recipe script
    speaking: its path was reported as the run's one final metric."""
    lines = ["steps/nnet2/train_pnorm_fast.sh: Will train for 15 + 5 epochs, equalling",
             "steps/nnet2/train_pnorm_fast.sh: 30 + 10 = 40 iterations,",
             *(f"Training neural net (pass {k})" for k in range(4))]
    artifact = verdict_of(tmp_path, lines)
    assert not [k for k in artifact["final_metrics"] if k.endswith(".sh")]


def test_a_wrapper_s_words_for_one_job_and_for_none():
    failed = find_events("queue.pl: job failed with status 1, log is in exp/tri1/log/acc.1.log")
    assert [e.kind for e in failed] == [EventKind.EXCEPTION]
    assert not find_events("run.pl: 0 / 8 failed, log is in exp/nnet2/log/train.3.*.log")


# -- an F1 that never moves; a table whose counters sit in brackets; `is:` -------------------

def test_an_f1_the_same_on_every_epoch_is_a_model_that_never_learned(tmp_path: Path):
    """A relation classifier's `Epoch N: Loss=…, F1=0.0914`: its F1 never moves from the
    first epoch while its loss does, one class for everything (named bare, on the line
    beside the loss). Two launches of ten epochs, as the log has them: over once the
    second stops where the first did."""
    losses = [1.8823, 1.6677, 1.6437, 1.6423, 1.6409, 1.6406, 1.6408, 1.6409, 1.6415, 1.6401]
    lines = [f"INFO:root:Epoch {e}: Loss={loss:.4f}, F1=0.0914, Time=0.05s"
             for _ in range(2) for e, loss in enumerate(losses, 1)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" and "f1" in a["description"]
               for a in artifact["anomalies_detected"])


def test_an_f1_that_climbs_is_no_finding(tmp_path: Path):
    lines = [f"INFO:root:Epoch {e}: Loss={2 / e:.4f}, F1={0.3 + 0.05 * e:.4f}, Time=0.05s"
             for e in range(1, 11)]
    artifact = verdict_of(tmp_path, lines)
    assert "not-learning" not in {a["type"] for a in artifact["anomalies_detected"]}


def _density_cnn(loss: float, error: float) -> list[str]:
    """The PyTorch tutorial's loop as a QM9 density CNN prints it: `[Epoch, Entry] -
    Loss` over one `[e,   b]   loss` row a batch, then the epoch's validation error in
    a sentence."""
    lines = ["[Epoch, Entry] - Loss"]
    for epoch in range(1, 11):
        lines += [f"[{epoch}, {batch:5d}]      {loss + 0.002 * (batch % 3):.3f}"
                  for batch in range(1, 24)]
        lines += [f"Epoch no {epoch} finished",
                  f"Validation error after epoch {epoch} is: {error + 0.001 * (epoch % 2):.3f}"]
    return [*lines, "Finished Training", "Saving model to ./QM9_net.pth"]


def test_a_table_whose_counters_sit_in_brackets_is_read(tmp_path: Path):
    artifact = verdict_of(tmp_path, _density_cnn(1.047, 1.047))
    assert "loss" in artifact["final_metrics"]


def test_a_validation_error_said_with_is_and_a_colon_is_read(tmp_path: Path):
    """`Validation error after epoch 10 is: 1.047` was read as a metric named `is`; read,
    the error held within 0.1 % over ten epochs says the model never learned."""
    artifact = verdict_of(tmp_path, _density_cnn(1.047, 1.047))
    assert "is" not in artifact["final_metrics"]
    assert artifact["final_metrics"].get("validation_error") is not None
    assert artifact["decision"] == "NO-GO"


# -- a plan of epochs beside a plan of steps, on one line ------------------------------------

def test_an_arguments_dump_with_epochs_and_iterations_keeps_both(tmp_path: Path):
    """An adversarial trainer's `Namespace(…, epochs=20, …, num_iterations=100, …)`: the
    attack's iterations were taken for the plan and the epochs never read, so a run that
    trained its 20 epochs and tested was left short of a plan it never counted in."""
    head = ("[2020/04/23 13:26:03] - Namespace(attack='pgd', batch_size=50, epochs=20, "
            "epsilon=0.3, learning_rate=0.2, num_iterations=100, num_restarts=1, seed=1)")
    lines = [head, "[2020/04/23 13:26:10] - Epoch \t Seconds \t LR \t \t Clean Loss \t Clean Acc"]
    lines += [f"[2020/04/23 13:{26 + e}:10] - {e} \t 75 \t \t 0.0500 \t {1 / e:.4f} \t "
              f"{0.9 + e / 1000:.4f}" for e in range(1, 21)]
    lines.append("[2020/04/23 13:51:36] - pgd attacked \t loss: 0.3 \t acc: 0.8980")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


# -- timm's last word --------------------------------------------------------------------------

def _timm(epochs: int, planned: int) -> list[str]:
    lines = [f"Scheduled epochs: {planned}"]
    for epoch in range(epochs):
        lines += [f"Train: {epoch} [{b:4d}/390 ({b * 100 // 390:3d}%)]  Loss:  "
                  f"{2.3 - 0.1 * epoch - b / 1000:.6f} (2.2937)  Time: 1.517s,   84.39/s  "
                  f"(1.558s,   82.15/s)  LR: 1.000e-03  Data: 0.000 (0.017)"
                  for b in (0, 50, 100, 150, 200, 250, 300, 350, 389)]
        lines.append(f"Eval : {epoch} Time: 0.091 (0.562)  Loss:  1.2608 (1.4000)  "
                     f"Acc@1: {40 + epoch:.4f} ({40 + epoch:.4f})Acc@5: 93.7500 (93.8000)")
    return [*lines, "", f"*** Best metric: {40 + epochs - 1:.2f} (epoch {epochs - 1})"]


def test_timm_s_best_metric_line_ends_the_run(tmp_path: Path):
    """timm's `train.py` prints `*** Best metric: … (epoch N)` once it has left its loop,
    however (it catches Ctrl-C and goes on to print it): the run is over. At epoch 1 of
    12 it is over short of its plan (BrainCog's CIFAR run, two epochs asked for on the
    command line the log does not show)."""
    artifact = verdict_of(tmp_path, _timm(2, 12))
    assert artifact["terminal_state"] == "ENDED"


def test_timm_s_best_metric_line_at_the_plan_s_end_is_a_finished_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, _timm(4, 4))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_one_evaluation_before_training_marks_no_epoch(tmp_path: Path):
    """UniRec evaluates at epoch 0 before it trains, then prints `epoch 1 training […]`:
    that evaluation marked no epoch trained, and the log, cut mid-evaluation, runs on."""
    def evaluated(epoch: int) -> list[str]:
        return [f"[INFO] SASRec: epoch {epoch} evaluating [time: 43.49s, ndcg@10: "
                f"{0.06 * epoch + 0.0003:.6f}]", "[INFO] SASRec: complete scores on valid set: ",
                f"hit@10:{0.12 * epoch + 0.0007:.6f} ndcg@10:{0.06 * epoch + 0.0003:.6f}",
                f"[INFO] SASRec: Saving best model at epoch {epoch} to /tmp/SASRec.pth",
                "[INFO] SASRec: ", f">> epoch {epoch + 1}"]

    lines = evaluated(0)
    for epoch in range(1, 3):
        lines += [f"[INFO] SASRec: epoch {epoch} training [time: 37.51s, train loss: "
                  f"{11888 - 900 * epoch:.4f}]", *evaluated(epoch)]
    lines = [*lines[:-4], "", lines[-1]]  # cut as the log is: in the last evaluation
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"


def test_evaluations_every_twentieth_epoch_say_nothing_of_its_end(tmp_path: Path):
    """SASRec's table of evaluations, a row every 20 epochs to 500: no plan, no word of an
    end; a round count is no end for a log that printed no training."""
    lines = ["epoch (val_ndcg, val_hr) (test_ndcg, test_hr)"]
    lines += [f"{e} ({0.5 + e / 1e4:.6f}, 0.77) ({0.48 + e / 1e4:.6f}, 0.74)"
              for e in range(20, 520, 20)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"


def test_a_run_whose_batches_report_accuracy_prints_training(tmp_path: Path):
    """GluonCV's ImageNet script prints no loss: its batches report the training's
    accuracy (`Epoch[0] Batch [49]\tSpeed: … samples/sec\taccuracy=0.001182\tlr=…`), and
    each epoch's validation follows. Those are training records, and the evaluations
    mark no epochs of their own: the run at its last planned epoch (359 of 360, from 0)
    finished."""
    lines = ["Namespace(batch_size=256, dataset='imagenet', lr=2.6, num_epochs=4, "
             "log_interval=50, mode='hybrid', model='mobilenetv3_large', warmup_epochs=5)"]
    for epoch in range(4):
        lines += [f"Epoch[{epoch}] Batch [{b}]\tSpeed: 3979.176322 samples/sec\t"
                  f"accuracy={0.1 * epoch + b / 1e4:.6f}\tlr=0.208067" for b in (49, 99, 149)]
        lines += [f"[Epoch {epoch}] training: accuracy={0.1 * epoch + 0.02:.6f}",
                  f"[Epoch {epoch}] speed: 3815 samples/sec\ttime cost: 343.580997",
                  f"[Epoch {epoch}] validation: top1={0.2 + 0.1 * epoch:.6f} top5=0.379668"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


# -- a scheduler's epilogue --------------------------------------------------------------------

def _pbs_job(day: int) -> list[str]:
    head = ["---------------------------------------",
            f"Begin PBS Prologue Thu Oct  {day} 12:12:09 EDT 2022",
            "Job ID:     5051620.sched-torque.pace.gatech.edu", "User ID:    someone",
            "Job name:   imitation", "Queue:      inferno",
            f"End PBS Prologue Thu Oct  {day} 12:12:09 EDT 2022",
            "---------------------------------------",
            "GPU available: True, used: True", "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]"]
    body = [f"Epoch {e}: reducing learning rate of group 0 to {1e-4 * 0.95 ** e:.4e}."
            for e in range(3, 10, 3)]
    tail = ["=>> PBS: job killed: walltime 30043 exceeded limit 30000",
            "---------------------------------------",
            f"Begin PBS Epilogue Thu Oct  {day} 20:33:02 EDT 2022",
            "Job ID:     5051620.sched-torque.pace.gatech.edu", "User ID:    someone",
            "Job name:   imitation",
            "Resources:  nodes=1:ppn=4:gpus=1,pmem=8gb,walltime=08:20:00",
            "Rsrc Used:  cput=10:59:31,vmem=38079968kb,walltime=08:20:53",
            "Queue:      inferno", f"End PBS Epilogue Thu Oct  {day} 20:33:02 EDT 2022",
            "---------------------------------------"]
    return [*head, *body, *tail]


def test_a_pbs_epilogue_after_the_time_limit_is_no_new_launch(tmp_path: Path):
    """Torque's epilogue says the job's identity again (`Job ID:`, `User ID:`, `Job
    name:`) as its prologue did: read as the start-up printed again, it began a new launch
    after the walltime kill, and the run was left RUNNING."""
    artifact = verdict_of(tmp_path, _pbs_job(6) + _pbs_job(7))
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "TIMEOUT")
