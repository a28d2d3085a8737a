"""A hand-written loop's evaluation said in a sentence is an evaluation (issue 24):
`Epoch 3 evaluated with loss: 0.016, dice score: 7e-05` names the validation's loss and
dice, not the training's; the training line beside it stays the training's."""

from __future__ import annotations

import math

from babysit.parsing.parser import LogParser


def _metrics(line: str) -> dict[str, float]:
    parser = LogParser()
    records = parser.feed_lines([line]) + parser.finish()
    return {k: v for r in records for k, v in r.metrics.items()}


def test_an_evaluation_said_in_a_sentence_is_an_evaluation():
    found = _metrics("Epoch 3 evaluated with loss: 0.016151112079677454, dice score: "
                     "7.361989992205054e-05. The running time is 32.33")
    assert found.keys() >= {"eval/dice_score"}
    assert all(k.startswith("eval/") for k in found)
    found = _metrics("epoch 7 validated with acc: 0.91, loss: 0.30")
    assert all(k.startswith("eval/") for k in found)


def test_the_training_sentence_beside_it_stays_the_training_s():
    found = _metrics("Epoch 3 trained with loss: 0.025478936015276246. The running time is 350.5")
    assert found and not any(k.startswith("eval/") for k in found)


def test_a_dice_or_an_iou_alone_on_its_line_is_read():
    found = _metrics("Testing performance in val model: mean_dice : 0.000455, "
                     "best_dice : 0.002702")
    assert found.get("mean_dice") == 0.000455
    assert _metrics("val mIoU: 0.4939783215522766") == {"val_miou": 0.4939783215522766}


def test_names_and_numbers_with_only_a_space_between():
    # A ProgressMeter epoch summary, tab-separated.
    found = _metrics("Training Loss 1.7513 \tTraining Accuracy 0.3380 \tTraining Step Time  "
                     "4.0077 \tValidation Loss 2.4306 \tValidation Accuracy 0.2273 ")
    assert found == {"training_loss": 1.7513, "training_accuracy": 0.338,
                     "validation_loss": 2.4306, "validation_accuracy": 0.2273}
    # A loss made of parts, each named loss_<part>.
    found = _metrics("  Iter: [100/3877]   Freq 129.1   loss_target 0.000   loss_source 0.223"
                     "   loss_total 19.478   [2020-04-17 18:04:52]")
    assert found["loss_total"] == 19.478 and found["loss_source"] == 0.223



def test_a_likelihood_is_a_loss_and_a_split_named_in_words_stays_the_split_s():
    assert _metrics("step 390 nll 2.3100")["nll"] == 2.31
    assert _metrics("epoch 3 | Test loss 0.3100 | lr 0.01") == {"test_loss": 0.31, "lr": 0.01}


def _run_steps(lines: list[str]) -> list[tuple[int | None, int | None]]:
    parser = LogParser()
    return [(r.step, r.target_steps) for r in parser.feed_lines(lines) + parser.finish()
            if r.metrics]


def test_a_step_that_starts_again_with_each_epoch_is_placed_in_the_run():
    # `Epoch E | iter I/500`: a newcomer's loop; the counter is the batch of its epoch.
    lines = [f"Epoch {e} | iter {i}/500 | loss: {2.0 - 0.1 * e:.4f}"
             for e in (1, 2, 3) for i in (100, 200, 300, 400, 500)]
    steps = _run_steps(lines)
    assert steps[5:7] == [(600, None), (700, None)]  # epoch 2: 500 + its batch; no plan
    assert steps[-1][0] == 1500
    # YOLOX logs every 10 of an epoch's 14 iterations: the epoch is the line's total.
    yolox = [f"epoch: {e}/20, iter: {i}/14, mem: 9135Mb, total_loss: {5.0 - e * 0.1:.1f}"
             for e in (1, 2, 3) for i in (10,)]
    assert [s for s, _ in _run_steps(yolox)][-1] == 2 * 14 + 10


def test_a_step_that_goes_on_across_epochs_is_left_as_it_is():
    lines = [f"Epoch {e} | step {100 * (3 * e + k)} | loss: 1.5" for e in (0, 1, 2)
             for k in (1, 2, 3)]
    assert [s for s, _ in _run_steps(lines)] == [100 * n for n in range(1, 10)]


def test_names_in_brackets_before_their_numbers_are_read():
    # LION's trainer through loguru (sealed-7): `module:function:line - ` is the logger's.
    line = ("2023-01-25 00:21:34.569 | INFO     | trainers.base_trainer:train_epochs:256 - [R0]"
            " | E6 iter[ 14/ 15] | [Loss] nan | [exp] ./exp/0125/car/3dbf3ah_hvae_lion_B40 | "
            "[step]   104 | [url] none | [time] 0.4m (~5h) |[best] 0 ")
    parser = LogParser()
    [record] = parser.feed_lines([line]) + parser.finish()
    assert record.step == 104 and math.isnan(record.metrics["loss"])
    assert "train_epochs" not in record.metrics
    assert _metrics("[INFO] 2023 started") == {}


def test_a_rank_named_among_the_fields_and_a_cross_validation_pass_are_read():
    # WeNet on four GPUs (sealed-7): each rank prints its own loss; `CV` is its evaluation.
    parser = LogParser()
    records = parser.feed_lines([
        "2023-01-30 18:47:07,107 DEBUG TRAIN Batch 4/203700 loss 12.646465 loss_att 10.921429 "
        "loss_ctc 16.671551 lr 0.00032621 rank 0",
        "2023-01-30 18:47:16,614 DEBUG TRAIN Batch 4/203700 loss 16.885244 loss_att 13.554604 "
        "loss_ctc 24.656742 lr 0.00032621 rank 1",
        "2023-01-30 18:49:55,773 DEBUG CV Batch 4/0 loss 28.517015 loss_att 24.142754 "
        "loss_ctc 38.723625 history loss 27.957858 rank 2"])
    assert [r.rank for r in records[:2]] == [0, 1]
    assert all(k.startswith("eval/") for k in records[2].metrics)
    assert _metrics("step 5 loss 0.3 local_rank 1") == {"loss": 0.3}


def test_pix2pix_s_iters_are_its_step_and_its_losses_are_read():
    # junyanz/pytorch-CycleGAN-and-pix2pix's visualizer (sealed-7, Windows): before this
    # the lines were not read at all, and the options block's `lr: 0.0002` counted as
    # training records made the run look finished.
    lines = [f"(epoch: 1, iters: {i}, time: 14.412, data: 0.080) G_GAN: 2.436 G_L1: {54 - i / 2} "
             f"D_real: 0.167 D_fake: 0.138 " for i in (20, 40, 60)]
    records = LogParser().feed_lines(lines)
    assert [r.step for r in records if "g_l1" in r.metrics][-2:] == [40, 60]
