"""The part of a line a logger wrote before the run's own text, taken off so the formats
read what the run printed.

A logger puts its own fields before the message: a timestamp (`2024-03-01 12:00:01,123`,
`[12:00:01]`), glog's head (`I0301 12:00:01.123 123 f.py:55]`), a level (`INFO`, `|
INFO |`, `[INFO]`), a logger's name before its level (`- trainer - INFO -`), a source
location (`train.py:55 -`). None of them is a measure of training, and read as one they
spoil the line: `INFO train.py:55` became a metric `info_train.py` = 55, and a line of
`Name value` fields (`spaced_fields`) failed on its `| INFO |` field. The fields are
recognised by their shapes only, at the start of the line, one after another; what is
not one of them is where the message starts.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.shown_values import shown_pairs

# One field of a logger's head, with the separators after it.
_HEAD_FIELD = lazy_re.compile(
    r"(?:"
    # a Docker Compose service's name, the line's first field, before a level or a timestamp
    # (`torch-FedAdam-run | INFO flwr 2023-12-01 19:45:36,172 | server.py:125 | …`)
    r"^[A-Za-z0-9][\w.-]*[ \t]*\|(?=[ \t]+(?:INFO|DEBUG|WARNING|WARN|\[?\d{4}-\d{2}-\d{2}[ T]))"
    # Ray's prefix on an actor's or a worker's output (`(_ray_fit pid=170789)`,
    # `(ClientAppActor pid=2421)`, `(RolloutWorker pid=85, ip=10.0.0.3)`, `(pid=4121)`): which
    # process printed the line, no figure (AutoGluon's read as a metric `_dystack_pid`)
    r"|\((?:[\w.]+ )?pid=\d+(?:, ip=[\w.:-]+)?\)"
    # a logger's name between its level and its timestamp (Flower's `%(levelname)s
    # %(name)s %(asctime)s | %(filename)s:%(lineno)d | %(message)s`: `INFO flwr 2023-12-01 …`)
    r"|(?:(?<=INFO )|(?<=DEBUG )|(?<=WARNING ))[A-Za-z_][\w.]*"
    r"(?=[ \t]+\d{4}-\d{2}-\d{2}[ T]\d{2}:)"
    # a rule that opens the head before its timestamp (fairseq's and TransQuest's `| 2021-07-08
    # 17:11:28 | INFO | Validation loss: 0.409, acc: 0.834`)
    r"|\|(?=[ \t]*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:)"
    # a logger's name before its timestamp (insightface's arcface_torch: `Training:
    # 2021-03-14 22:08:20,513-Speed 469.12 samples/sec   Loss 15.4833 …`)
    r"|[A-Za-z][\w.]*:[ \t]+(?=\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})"
    # ISO (or a date and a time apart by a slash: `2022-03-31/22:45:47`)
    # (its date by slashes or dots too: robust_overfitting's `[2020/04/27 12:22:28] - `)
    # (or in eight digits: DiffV2IQA's `[20250522 16:25:17 INFO    ] Running training epoch 55`)
    r"|\[?\d{4}(?:-\d{2}-\d{2}|/\d{2}/\d{2}|\.\d{2}\.\d{2}|\d{4}(?=[ T]))[ T/]\d{2}:\d{2}:\d{2}"
    r"(?:[.,]\d+)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?\]?"
    r"|\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?"  # a time of day
    # C's and Python's `asctime` (the skeleton-action trainers' `print_log`, 2s-AGCN, MS-G3D,
    # CTR-GCN: `[ Mon Jul  4 01:33:12 2022 ] Training epoch: 50`)
    r"|\[?[ \t]*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|"
    r"Dec)[ \t]+\d{1,2} \d{2}:\d{2}:\d{2} \d{4}[ \t]*\]?"
    # a date and a time joined by a bar (torchlight's `[%m.%d.%y|%X]`, ST-GCN's and
    # mmskeleton's: `[04.29.20|17:42:13] Training epoch: 149`)
    r"|\[\d{2}[./-]\d{2}[./-]\d{2,4}\|\d{2}:\d{2}:\d{2}\]"
    # a month and a day, then a time of day on a 12-hour clock (pt.darts's `%m/%d %I:%M:%S
    # %p`: `04/28 04:22:15 PM | Parameters:`)
    r"|\[?\d{2}/\d{2}(?:/\d{2,4})? \d{1,2}:\d{2}:\d{2}(?:\s?[AP]M)?\]?"
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+[\w.-]+:\d+\]"  # glog / absl
    # NeMo's: its name, a level's letter, the time, the module and line in one bracket
    # (`[NeMo I 2025-03-04 08:28:03 wer:330] reference: …`: `wer:330` is wer.py's line)
    r"|\[[A-Za-z][\w.-]* [DIWEFC] \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)? "
    r"[\w.<>-]+:\d+\]"
    # progress dots a glog trainer writes with no newline (PaddlePaddle v1's `--dot_period`:
    # `.......I0306 00:32:25.55 35 TrainerInternal.cpp:182]  Pass=49 …`): the head follows
    r"|\.+(?=[IWEF]\d{4} \d{2}:)"
    # Python's `INFO:root:`
    r"|(?:INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL):[\w.]+:(?!\d)(?=\S|[ \t])"
    # (not a figure's name and its value glued to the level: IFRNet's `%(asctime)s:
    # %(levelname)s:%(message)s`, `2026-06-16 18:32:14:INFO:epoch:1/200 iter:800/51312`;
    # the level alone is the head)
    r"|(?:INFO|DEBUG|WARNING|WARN):(?=[A-Za-z_][\w.]*(?: [A-Za-z_][\w.]*){0,2}:\d)"
    # a level, then the logger's dotted name (`INFO     main.train_DNN: epoch 1, …`,
    # Python's `%(levelname)8s %(name)s: %(message)s`): a bare word after a level is the
    # message's own (`INFO loss: 0.5`), so the name needs a dot or is `__main__`/`root`
    r"|\[?(?:INFO|DEBUG|WARNING|WARN|NOTICE)\]?[ \t]+"
    r"(?:[A-Za-z_]\w*(?:\.\w+)+|__main__|root)(?::[ \t]*\d+)?:(?=[ \t])"
    # the process's id before the level (FuxiCTR's `%(asctime)s P%(process)d
    # %(levelname)s %(message)s`: `2025-05-31 15:11:47,522 P16402 INFO Train loss: 0.69`)
    r"|(?:P|pid[:=]?)\d+(?=[ \t]+\[?(?:INFO|DEBUG|WARNING|WARN|NOTICE|ERROR|CRITICAL)\b)"
    # a level padded to its width, closing the bracket its timestamp opened (`[20250522
    # 16:25:17 INFO    ] …`, `[2024-01-01 12:00:00 WARNING] …`)
    r"|(?<=[\d ])(?:INFO|DEBUG|WARNING|WARN|NOTICE|ERROR|CRITICAL)[ \t]*\](?=\s)"
    r"|\[?(?:INFO|DEBUG|WARNING|WARN|NOTICE)\]?(?=[\s|:-])"  # a level
    # ... and the logger's dotted name after it, fields joined by tabs (torchdistill's
    # `%(asctime)s\t%(levelname)s\t%(name)s\t%(message)s`: `2020-10-16 21:41:20,381\tINFO\t
    # kdkit.misc.log\tValidation:  [  0/131] …`)
    r"|(?<=\t)(?:[A-Za-z_]\w*(?:\.\w+)+|__main__|root)(?=\t)"
    # ... or before it (VITS's `%(asctime)s\t%(name)s\t%(levelname)s\t%(message)s`:
    # `2024-11-08 17:20:57,136\tljs_base\tINFO\t[nan, nan, …]`), any name between tabs
    r"|(?<=\t)[A-Za-z_][\w.-]*(?=\t(?:INFO|DEBUG|WARNING|WARN|NOTICE)\t)"
    # ... or by dashes, after the level (`%(asctime)s - %(levelname)s - %(name)s -
    # %(message)s`: AllenNLP's `… - INFO - allennlp.training.trainer - Epoch 0/199`)
    r"|(?<=- )(?:[A-Za-z_]\w*(?:\.\w+)+|__main__|root)(?= - )"
    # ... padded inside its brackets (`%(levelname)8s`: `[2024-08-21 12:59:17,846][    INFO]`)
    r"|\[[ \t]+(?:INFO|DEBUG|WARNING|WARN|NOTICE)\]"
    # a logger's name before its level (with a hyphen too: easytorch's `2024-09-12
    # 12:25:00,185 - easytorch-training - INFO - Epoch 1 / 300`)
    r"|\w[\w.-]*(?= - (?:INFO|DEBUG|WARNING|WARN)\b)"
    # a source location (its line number padded too: PySlowFast's `train_net.py:  518:`)
    r"|\[?[\w./-]+\.py:[ \t]*\d+(?::[\w<>]+)?\]?(?=[\s|:-])"
    r"|[\w.]+:[\w<>]+:\d+(?= - )"  # loguru's `module:function:line - `
    # the separators after a field (a double colon too: rlkit's `%(asctime)s :: %(levelname)s
    # :: %(message)s`); a colon may touch the level after it, as in
    # `%(asctime)s:%(levelname)s: %(message)s` (`2018-09-04 18:44:21,417:INFO: Epoch 8/10`)
    # (a dash touching the message after a timestamp, `%(asctime)s-%(message)s`:
    # `…,513-Speed 469.12`)
    r")[ \t]*(?:(?:::|[|:-])[ \t]+|[|](?=\S)|:(?=(?:INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL):)|"
    r"(?<=\d)-(?=[A-Za-z]))?")


# PyTorch's repr of a scalar tensor, `tensor(2.5000, device='cuda:0')`: its value is the
# number; the rest (`device='cuda:0'`, `grad_fn=<…>`) read as pairs made a metric `cuda`
# = 0 and, split at its comma, broke a line of fields.
_TENSOR = lazy_re.compile(r"tensor\(\s*([-+]?[\w.]+)\s*(?:,[^()]*(?:\([^()]*\)[^()]*)*)?\)")


# A logger's bracketed head with its source location, wherever it stands in a line (a
# terminal capture glues NeMo's `[NeMo I 2025-03-04 08:28:28 wer:329]` to the end of a
# progress bar): the module and line number are no figure (`wer:329` is wer.py's line).
_BRACKETED_HEAD = lazy_re.compile(r"\[[A-Za-z][\w.-]* [DIWEFC] \d{4}-\d{2}-\d{2} "
                                  r"\d{2}:\d{2}:\d{2}(?:[.,]\d+)? [\w.<>-]+:\d+\]")


def without_bracketed_heads(text: str) -> str:
    """`text` without any logger head of NeMo's shape in it (see `_BRACKETED_HEAD`)."""
    if " I 20" not in text and " W 20" not in text and " E 20" not in text \
            and " D 20" not in text and " F 20" not in text and " C 20" not in text:
        return text
    return _BRACKETED_HEAD.sub(" ", text)


def message(text: str) -> str:
    """`text` without the logger's head before the run's message, and with each scalar
    tensor's repr as its value (the very same string when there is neither). Only a head
    of timestamps, levels, a logger's name and source locations is taken off."""
    if "tensor(" in text:
        text = _TENSOR.sub(r"\1", text)
    text = shown_pairs(text)  # Julia's `@show`: `(i, loss(x)) = (3, 0.29)`
    at = 0
    while True:
        field = _HEAD_FIELD.match(text, at)
        if field is None or field.end() == at:
            break
        at = field.end()
    if not at:
        return text
    return text[at:].lstrip()
