"""A loop's metrics written into its bar's description with `set_description` are read
(issue 24): without them such a run's losses were never read at all. Lines are the
public logs' (sealed-7 haftfusion_gan_tqdm_cr_epoch…, dmrgcn_tqdm_epoch_val_loss…)."""

from __future__ import annotations

from babysit.parsing.bars import parse_tqdm
from babysit.parsing.parser import LogParser


def test_a_gan_loops_losses_in_the_description_are_read():
    bar = parse_tqdm("Epoch: 34, L1: 0.075, Percep: 2.308, Gen: 0.492, Disc: 0.500:  50%|"
                     "█████     | 249/496 [15:35<10:25,  2.53s/it]")
    assert bar is not None
    assert bar.metrics == {"l1": 0.075, "percep": 2.308, "gen": 0.492, "disc": 0.5}


def test_the_descriptions_counter_is_not_a_metric_and_the_postfix_wins():
    bar = parse_tqdm("Train Epoch: 19 Loss: 0.35977894: 100%|██████████| 2785/2785 "
                     "[00:52<00:00, 52.58it/s, loss=0.36]")
    assert bar is not None
    assert bar.metrics == {"loss": 0.36}


def test_a_plain_description_gives_no_metrics():
    bar = parse_tqdm("Epoch 3:  45%|####5     | 450/1000 [00:10<00:12, 44.10it/s]")
    assert bar is not None and bar.metrics == {}


def test_the_records_carry_the_descriptions_losses():
    lines = [f"Epoch: {e}, L1: 0.07{e}, Gen: 0.49{e}, Disc: 0.500:  50%|█████     | "
             f"{100 + e}/496 [15:35<10:25,  2.53s/it]" for e in range(1, 4)]
    records = LogParser().feed_lines(lines)
    assert [r.metrics.get("disc") for r in records] == [0.5, 0.5, 0.5]


def test_a_postfix_of_names_and_values_without_equals_is_read():
    # sealed-13's WS-DAN log: `set_postfix_str` with `Name value` fields, and pairs of
    # accuracies (top-1, top-5) in parentheses, which are no one value.
    bar = parse_tqdm("Epoch 85/300: 100%|██████████| 8144/8144 [1:24:14<00:00,  1.61 "
                     "batches/s, Loss 6.2739, Raw Acc (0.39, 2.49), Crop Acc (0.39, 2.49), "
                     "Val Loss 44.7789, Val Acc (0.52, 2.70)]")
    assert bar is not None
    assert bar.metrics == {"loss": 6.2739, "val_loss": 44.7789}


def test_an_epoch_average_frozen_from_the_first_line_is_not_learning(tmp_path):
    from tests.rules.test_loss_rules import verdict_of

    lines = [f"Epoch {e}/300: 100%|██████████| 8144/8144 [1:24:14<00:00,  1.61 batches/s, "
             f"Loss 6.2739, Val Loss {44.7 + e / 100:.4f}]" for e in range(85, 91)]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO"
    assert "not-learning" in {a["type"] for a in data["anomalies_detected"]}
