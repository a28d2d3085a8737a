"""fairseq's `log_format: json` under hydra (a logger's prefix, then a JSON object whose
numbers are strings): training, validation and epoch-summary lines, quoted from
sealed-2/fairseq_hydra_ropadet_wav2vec_valid_loss_rising_tmp_no_space_crash.log."""

from __future__ import annotations

from babysit.parsing.fairseq_json import parse_fairseq_json
from babysit.parsing.parser import LogParser

_INNER = ('[2022-06-06 09:18:44,886][train_inner][INFO] - {"epoch": 1, "update": 0.252, '
          '"loss": "0.264", "ce_loss": "0.507", "scl_loss": "0.237", "accuracy": "27.394", '
          '"ppl": "1.2", "wps": "218.2", "ups": "6.83", "wpb": "32", "bsz": "32", '
          '"num_updates": "200", "lr": "1.099e-06", "gnorm": "0.149", "train_wall": "29", '
          '"gb_free": "7.6", "wall": "58"}')
_VALID = ('[2022-06-06 09:20:28,960][valid][INFO] - {"epoch": 1, "valid_loss": "0.267", '
          '"valid_ce_loss": "0.531", "valid_scl_loss": "0.237", "valid_accuracy": "21.537", '
          '"valid_ppl": "1.2", "valid_wps": "636.6", "valid_wpb": "31.4", "valid_bsz": "31.4", '
          '"valid_icbhi": "0.226814", "valid_num_updates": "794"}')


def test_a_training_line_gives_its_step_and_metrics() -> None:
    parsed = parse_fairseq_json(_INNER)
    assert parsed is not None and parsed.step == 200 and parsed.epoch == 1.0
    assert parsed.metrics["loss"] == 0.264 and parsed.metrics["lr"] == 1.099e-06
    assert "wps" not in parsed.metrics and "num_updates" not in parsed.metrics


def test_a_validation_line_is_the_evaluation_s_at_its_update() -> None:
    parsed = parse_fairseq_json(_VALID)
    assert parsed is not None and parsed.step == 794
    assert parsed.metrics["valid_loss"] == 0.267 and "valid_wps" not in parsed.metrics


def test_the_parser_reads_the_run_s_history() -> None:
    records = LogParser().feed_lines([_INNER, _VALID])
    assert [r.step for r in records if r.metrics] == [200, 794]


def test_other_lines_are_not_fairseq_json() -> None:
    assert parse_fairseq_json('{"step": 10, "loss": 2.3}') is None
    assert parse_fairseq_json("[2022-06-06 09:17:56,160][fairseq_cli.train][INFO] - "
                              "{'_name': None, 'common': {'log_interval': 200}}") is None
