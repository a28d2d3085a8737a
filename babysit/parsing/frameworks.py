"""Line formats of particular training frameworks, one pure parser each.

Each `parse_*` takes one cleaned text segment and returns a `Parsed` or None, like the
generic parsers in `formats`; they are tried before those. Examples of every shape are
in references/log-formats.md, and each comes from a real public log kept in
tests/fixtures/logs/public.
"""

from __future__ import annotations

import re
from dataclasses import replace

from babysit import lazy_re
from babysit.parsing.counter_value import parse_counter_value
from babysit.parsing.formats import Parsed, key_values, split_counters
from babysit.parsing.spaced_fields import parse_spaced_fields
from babysit.parsing.text import normalise_key, to_number

# --- Megatron-LM ------------------------------------------------------------------

_MEGATRON = lazy_re.compile(r"iteration\s+(?P<step>\d+)\s*/\s*(?P<target>\d+)\s*\|(?P<rest>.*)")
_FIELD_NAME = lazy_re.compile(r"^[A-Za-z][A-Za-z ]{0,40}$")  # words only: a field's name


def parse_megatron(segment: str) -> Parsed | None:
    """` iteration      100/  500000 | consumed samples: 51200 | lm loss: 7.2E+00 | ...`;
    its early releases put no colon in some fields (`| learning rate 6.300E-06 | lm loss
    NAN | loss scale 64.0 |`): the field's last word is then its value."""
    if "iteration" not in segment:
        return None
    match = _MEGATRON.search(segment)
    if match is None:
        return None
    metrics: dict[str, float] = {}
    for field_text in match.group("rest").split("|"):
        key, sep, value = field_text.partition(":")
        if not sep:
            key, _, value = field_text.strip().rpartition(" ")
            if not _FIELD_NAME.match(key):
                continue
        number = to_number(value)
        if number is not None:
            metrics[normalise_key(key)] = number
    metrics.pop("consumed_samples", None)
    return Parsed("megatron", int(match.group("step")), int(match.group("target")),
                  metrics=metrics)


# --- nanoGPT ----------------------------------------------------------------------

_NANOGPT_ITER = lazy_re.compile(
    r"^iter (?P<step>\d+): loss (?P<loss>\S+), time (?P<ms>[\d.]+)ms(?:, mfu (?P<mfu>-?[\d.]+)%)?"
)
_NANOGPT_EVAL = lazy_re.compile(
    r"^step (?P<step>\d+): train loss (?P<train>\S+), val loss (?P<val>\S+?),?\s*$"
)


def parse_nanogpt(segment: str) -> Parsed | None:
    text = segment.strip()
    if not text.startswith(("iter ", "step ")):
        return None
    match = _NANOGPT_ITER.match(text)
    if match is not None:
        metrics = {"loss": to_number(match.group("loss").rstrip(","))}
        ms = to_number(match.group("ms"))
        if ms:
            metrics["time_ms"] = ms
            metrics["steps_per_second"] = 1000.0 / ms
        if match.group("mfu") is not None:
            metrics["mfu"] = to_number(match.group("mfu"))
        return Parsed("nanogpt", int(match.group("step")),
                      metrics={k: v for k, v in metrics.items() if v is not None})
    match = _NANOGPT_EVAL.match(text)
    if match is not None:
        evals = {"train_loss_est": to_number(match.group("train")),
                 "val_loss": to_number(match.group("val"))}
        return Parsed("nanogpt", int(match.group("step")),
                      metrics={k: v for k, v in evals.items() if v is not None})
    return None


# --- `Epoch [1/10], Step [100/600], Loss: 0.2345` -----------------------------------

_EPOCH_STEP = lazy_re.compile(
    r"Epoch\s*\[?\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\s*\]?\s*[,|]?\s*"
    r"(?:Step|Iter|Batch)\s*\[?\s*(?P<step>\d+)\s*/\s*(?P<steps>\d+)\s*\]?(?P<rest>.*)",
    re.IGNORECASE,
)


def parse_epoch_step(segment: str) -> Parsed | None:
    if "poch" not in segment and "POCH" not in segment:
        return None
    match = _EPOCH_STEP.search(segment)
    if match is None:
        return None
    epoch, epochs = int(match.group("epoch")), int(match.group("epochs"))
    step, steps = int(match.group("step")), int(match.group("steps"))
    metrics = key_values(match.group("rest"))
    # The batch of its epoch and the epoch's batches: `metric_lines` places them in the
    # run, counting epochs from 0 or from 1 as the run's first epoch shows (a script's
    # `Epoch 0/4, Iter 5/1029` is the first epoch, as `Epoch [1/10], Step [5/600]` is).
    return Parsed("epoch-step", step, steps, float(epoch), epochs, metrics, per_epoch=steps)


# --- torchtitan ---------------------------------------------------------------------

_TITAN = lazy_re.compile(r"step:\s*(?P<step>\d+)\s+(?P<rest>loss:.*)")
_TITAN_PAIR = lazy_re.compile(
    r"(?P<key>[a-z_]+):\s*(?P<value>[\d.,eE+\-]+|nan|inf)(?P<unit>[A-Za-z]*)")


def parse_torchtitan(segment: str) -> Parsed | None:
    """`step:  1  loss: 12.2345  memory: 1.23GiB(1.23%)  tps: 1,234  tflops: 12.3  mfu: 1.2%`"""
    if "step:" not in segment:
        return None
    match = _TITAN.search(segment)
    if match is None:
        return None
    metrics: dict[str, float] = {}
    for pair in _TITAN_PAIR.finditer(match.group("rest")):
        number = to_number(pair.group("value"))
        if number is None:
            continue
        key = pair.group("key")
        if pair.group("unit") == "GiB":
            key = f"{key}_gib"
        metrics[key] = number
    return Parsed("torchtitan", int(match.group("step")), metrics=metrics)


# --- fairseq ----------------------------------------------------------------------------
# legacy: `| epoch 027 | loss 6.343 | nll_loss 4.984 | ... | num_updates 10198 | ...`
#         `| epoch 001:    200 / 1374 loss=14.351, ppl=20899.56, ..., num_updates=190, ...`
#         `| epoch 027 | valid on 'valid' subset | valid_loss 8.30 | ... | num_updates 10198`
# hydra:  `... | INFO | train_inner | epoch 003:  5 / 356 loss=9.44, ..., num_updates=700, ...`
_FAIRSEQ_EPOCH = lazy_re.compile(r"\bepoch (\d+)(?::\s*(\d+)\s*/\s*(\d+))?")
_PIPE_PAIR = lazy_re.compile(r"^\s*([A-Za-z][\w/.()-]*)\s+([-+]?(?:\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|"
                             r"nan|inf|-inf))\s*$")


def parse_fairseq(segment: str) -> Parsed | None:
    if "num_updates" not in segment or "epoch" not in segment:
        return None
    values: dict[str, float] = {}
    for part in segment.split("|"):
        pair = _PIPE_PAIR.match(part)
        if pair is not None:
            number = to_number(pair.group(2))
            if number is not None:
                values[normalise_key(pair.group(1))] = number
        elif "=" in part:
            values.update(key_values(part))
    step = values.pop("num_updates", None)
    if step is None:
        return None
    epoch_match = _FAIRSEQ_EPOCH.search(segment)
    epoch = None
    if epoch_match is not None:
        epoch = float(epoch_match.group(1))
        if epoch_match.group(2) and epoch_match.group(3) and int(epoch_match.group(3)):
            epoch = epoch - 1 + int(epoch_match.group(2)) / int(epoch_match.group(3))
    valid = "valid on" in segment or "| valid |" in segment
    metrics = {}
    for key, value in values.items():
        if key in ("epoch", "wall", "train_wall", "wpb", "bsz", "oom", "clip", "gb_free"):
            continue
        if valid and not key.startswith(("valid", "best")):
            key = f"valid_{key}"
        metrics[key] = value
    return Parsed("fairseq", int(step), epoch=epoch, metrics=metrics)


# --- mmengine / MMDetection / XTuner (mmcv 1.x too) -----------------------------------------
# `Epoch(train) [100][  50/4309]  base_lr: 2.0e-03 lr: 5.96e-05  eta: 12:14:32 ... loss: 1111.4`
# `Iter(train) [  50/40000]  lr: 1.0e-04  eta: ...  loss: 0.52`
# `Epoch [1][50/1084]\tlr: 0.01000, eta: 14:19:58, ..., loss_bbox: nan, loss: nan`  (mmcv 1.x)
# (mmcv 1.x's evaluation names only the batches it ran: `Epoch(val) [9][271]\tbbox_mAP: 0.566`)
_MM_EPOCH = lazy_re.compile(r"Epoch(?:\((?P<mode>\w+)\))?\s*\[\s*(?P<epoch>\d+)\s*\]\s*"
                            r"\[\s*(?P<i>\d+)\s*(?:/\s*(?P<n>\d+)\s*)?\](?P<rest>.*)")
_MM_ITER = lazy_re.compile(r"Iter\((?P<mode>\w+)\)\s*\[\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s*\]"
                           r"(?P<rest>.*)")
_MM_NOT_METRICS = ("eta", "time", "data_time", "memory", "base_lr")


def parse_mmengine(segment: str) -> Parsed | None:
    if "Epoch" not in segment and "Iter(" not in segment:
        return None
    match = _MM_EPOCH.search(segment)
    if match is None:
        match = _MM_ITER.search(segment)
        if match is None:
            return None
        i, n = int(match.group("i")), int(match.group("n"))
        metrics = _mm_metrics(match.group("rest"))
        if match.group("mode") not in (None, "train"):
            return Parsed("mmengine", metrics={f"val/{k}": v for k, v in metrics.items()})
        return Parsed("mmengine", i, n, metrics=metrics)
    training = match.group("mode") in (None, "train")
    if match.group("n") is None and training:
        return None
    metrics = _mm_metrics(match.group("rest"))
    if not training:
        return Parsed("mmengine", metrics={f"val/{k}": v for k, v in metrics.items()})
    epoch, i, n = int(match.group("epoch")), int(match.group("i")), int(match.group("n"))
    return Parsed("mmengine", (epoch - 1) * n + i, epoch=epoch - 1 + i / n if n else None,
                  metrics=metrics, per_epoch=n)


def _mm_metrics(text: str) -> dict[str, float]:
    values = key_values(text)
    return {k: v for k, v in values.items() if k not in _MM_NOT_METRICS}


# --- the PyTorch ImageNet example and its descendants (MoCo, DeiT's MetricLogger): ------
# `Epoch: [34][3670/4999]  Time  0.471 ( 1.651)  Loss 6.9694e+00 (6.9144e+00)  Acc@1 78.12`
# `Epoch: [51]  [10/31]  eta: 0:00:07  lr: 0.000755  loss: 0.0137 (0.0158)`
# `[Train] Epoch: [1][100/500]  loss: 0.52`   (epochs counted from 0, batches per epoch)
_EXAMPLE_EPOCH = lazy_re.compile(r"Epoch:\s*\[\s*(?P<epoch>\d+)\s*\]\s*"
                                 r"\[\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s*\](?P<rest>.*)")
# (A name whole: `eval/loss 7.0` is not a `loss` of 7.0.)
_SPACED_PAIR = lazy_re.compile(r"(?<![\w@/.-])(?P<key>[A-Za-z][\w@/.]*)\s+"
                               r"(?P<value>[-+]?\d[\d.]*(?:[eE][-+]?\d+)?|nan|inf)"
                               r"(?:\s*\(\s*[-+]?[\d.eE+-]+\))?")


def parse_example_epoch(segment: str) -> Parsed | None:
    if "Epoch:" not in segment:
        return None
    match = _EXAMPLE_EPOCH.search(segment)
    if match is None:
        return None
    epoch, i, n = int(match.group("epoch")), int(match.group("i")), int(match.group("n"))
    rest = match.group("rest")
    metrics = key_values(rest)
    for pair in _SPACED_PAIR.finditer(rest):
        number = to_number(pair.group("value"))
        key = normalise_key(pair.group("key"))
        if number is None or key in ("time", "data", "eta"):
            continue
        if any(k.endswith(f"_{key}") and v == number for k, v in metrics.items()):
            continue  # the last word of a name read whole (`valid loss 7.0`: not a `loss`)
        metrics.setdefault(key, number)  # `Loss 6.9 (6.91)`: the value, not the average
    metrics = {k: v for k, v in metrics.items() if k not in ("time", "data", "eta", "max_mem")}
    return Parsed("torch-example", epoch * n + i, epoch=epoch + i / n if n else None,
                  metrics=metrics, per_epoch=n)


# --- timm: `Train: 3 [ 240/2502 ( 10%)]  Loss: 3.36 (3.48)  Time: ...  LR: 1.0e-03` ----------
_TIMM = lazy_re.compile(
    r"^\s*Train:\s*(?P<epoch>\d+)\s*\[\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s*\(\s*\d+%\)\]"
                   r"(?P<rest>.*)")
_TIMM_PAIR = lazy_re.compile(r"(?P<key>[A-Za-z][\w/ ]*?):\s*"
                             r"(?P<value>[-+]?[\d.]+(?:[eE][-+]?\d+)?|nan|inf)")


def parse_timm(segment: str) -> Parsed | None:
    if "Train:" not in segment:
        return None
    match = _TIMM.match(segment)
    if match is None:
        return None
    epoch, i, n = int(match.group("epoch")), int(match.group("i")), int(match.group("n"))
    metrics: dict[str, float] = {}
    for pair in _TIMM_PAIR.finditer(match.group("rest")):
        number = to_number(pair.group("value"))
        key = normalise_key(pair.group("key"))
        if number is not None and key not in ("time", "data"):
            metrics.setdefault(key, number)  # `Loss: 3.36 (3.48)`: the current value first
    # timm numbers epochs from 0 and the batch index restarts every epoch.
    return Parsed("timm", epoch * n + i, epoch=epoch + i / n if n else None, metrics=metrics,
                  per_epoch=n)


# --- OLMo: a header `[step=2/739328,epoch=0]`, metrics on the indented lines after it ------
_OLMO = lazy_re.compile(r"\[step=(?P<step>\d+)(?:/(?P<target>\d+))?(?:,epoch=(?P<epoch>\d+))?\]")


def parse_olmo(segment: str) -> Parsed | None:
    if "[step=" not in segment:
        return None
    match = _OLMO.search(segment)
    if match is None:
        return None
    target = match.group("target")
    epoch = match.group("epoch")
    return Parsed("olmo", int(match.group("step")), int(target) if target else None,
                  epoch=float(epoch) if epoch is not None else None)


# --- MockingBird / Real-Time-Voice-Cloning ------------------------------------------------
# `{| Epoch: 55/167 (996/1926) | Loss: 0.2907 | 0.93 steps/s | Step: 425k | }`
_MOCKINGBIRD = lazy_re.compile(
    r"Epoch:\s*(?P<epoch>\d+)/(?P<epochs>\d+)\s*\((?P<i>\d+)/(?P<n>\d+)\)"
                          r"(?P<rest>.*?)Step:\s*(?P<step>\d+)(?P<k>k?)")


def parse_mockingbird(segment: str) -> Parsed | None:
    if "Step:" not in segment or "Epoch:" not in segment:
        return None
    matches = list(_MOCKINGBIRD.finditer(segment))
    if not matches:
        return None
    match = matches[-1]  # several records glued on one line: the newest
    epoch, epochs = int(match.group("epoch")), int(match.group("epochs"))
    i, n = int(match.group("i")), int(match.group("n"))
    printed = int(match.group("step"))
    counted = (epoch - 1) * n + i
    target: int | None = epochs * n
    step = counted
    if match.group("k"):
        # `Step: 425k` is rounded down to thousands: trust it over the epoch count when
        # the two disagree (a resumed run, a changed batch size).
        if not printed * 1000 <= counted < (printed + 1) * 1000:
            step, target = printed * 1000, None
    elif printed != counted:
        step, target = printed, None
    metrics = key_values(match.group("rest").replace("|", " "))
    return Parsed("mockingbird", step, target, epoch=epoch - 1 + i / n if n else None,
                  total_epochs=epochs, metrics=metrics)


# --- BigDL: `[Epoch 64 740096/1281167][Iteration 45459][Wall Clock ...] ... Loss is 1.26.` --
_BIGDL = lazy_re.compile(
    r"\[Epoch (?P<epoch>\d+) (?P<i>\d+)/(?P<n>\d+)\]\[Iteration (?P<step>\d+)\]"
                    r"(?P<rest>.*)")
_IS_VALUE = lazy_re.compile(
    r"\b(?P<key>[A-Z]?[a-z][\w ]*?) is (?P<value>[-+]?[\d.]+(?:[eE][-+]?\d+)?"
                       r"|NaN|nan|Infinity|-Infinity|inf)\b")


def parse_bigdl(segment: str) -> Parsed | None:
    if "[Iteration " not in segment:
        return None
    match = _BIGDL.search(segment)
    if match is None:
        return None
    metrics: dict[str, float] = {}
    for pair in _IS_VALUE.finditer(match.group("rest")):
        number = to_number(pair.group("value"))
        if number is not None:
            metrics[normalise_key(pair.group("key"))] = number
    epoch = int(match.group("epoch"))
    i, n = int(match.group("i")), int(match.group("n"))
    return Parsed("bigdl", int(match.group("step")), epoch=epoch - 1 + i / n if n else None,
                  metrics=metrics)


# --- `| [   2/   3][   500/  1000] |   67/1932 batches | train_loss 1.57e-01 | lr 2.7e-05` ---
# Two bracketed counters: the epoch of the epochs, then the step of the planned steps (or,
# when the second total is the batches of one epoch, the batch of the epoch).
_TWO_BRACKETS = lazy_re.compile(r"\[\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\s*\]\s*"
                                r"\[\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s*\](?P<rest>.*)")


# The PyTorch tutorial's and I-JEPA's `[epoch, batch/batches]`: `[50,  2550/ 2562] - train_losses
# - Children class: 2.75 …` (the epoch, then the batch of that epoch).
_EPOCH_BATCH = lazy_re.compile(r"(?:^|[\s:])\[\s*(?P<epoch>\d+),\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s*\]"
                               r"(?P<rest>.*)")
# PyTorch's CIFAR-10 tutorial ("Training a classifier") and the many loops grown from it:
# the epoch and the batch of that epoch, no totals, `[1,  2000] loss: 2.199` (its batch
# counted from 1 in each epoch, printed every 2000).
_TUTORIAL = lazy_re.compile(r"^\[\s*(?P<epoch>\d+),\s*(?P<i>\d+)\s*\]:?\s+(?P<rest>[A-Za-z].*)$")


# PyTorch's word_language_model example and its many descendants: the epoch, then the
# batch of that epoch by its unit: `| epoch   1 |   200/ 2983 batches | lr 20.00 | ms/batch
# 45.85 | loss  7.63 | ppl  2063.55`.
_EPOCH_UNITS = lazy_re.compile(r"\b[Ee]poch\s+(?P<epoch>\d+)\s*\|\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s+"
                               r"(?:batches|iters|iterations|steps)\b(?P<rest>.*)")


def parse_bracket_counters(segment: str) -> Parsed | None:
    match = _TWO_BRACKETS.search(segment) if "][" in segment else None
    if match is not None:
        return _counters(int(match.group("epoch")), int(match.group("epochs")),
                         int(match.group("i")), int(match.group("n")), match.group("rest"))
    if "poch" in segment and "|" in segment and "/" in segment:
        match = _EPOCH_UNITS.search(segment)
        if match is not None:
            return _counters(int(match.group("epoch")), None, int(match.group("i")),
                             int(match.group("n")), match.group("rest"))
    if "," not in segment:
        return None
    if "/" not in segment:
        tutorial = _TUTORIAL.match(segment) if segment[:1] == "[" else None
        if tutorial is None:
            return None
        found = _counters(int(tutorial.group("epoch")), None, int(tutorial.group("i")), 0,
                          tutorial.group("rest"))
        # (no total, so no step of the run's: the batch is counted from 1 again in each
        # epoch, and where the epoch stands is the epoch itself)
        return replace(found, step=None, target=None, fmt="epoch-pair") \
            if found is not None else None
    match = _EPOCH_BATCH.search(segment)
    if match is None:
        return None
    return _counters(int(match.group("epoch")), None, int(match.group("i")),
                     int(match.group("n")), match.group("rest"))


def _counters(epoch: int, epochs: int | None, i: int, n: int, rest: str) -> Parsed | None:
    values: dict[str, float] = {}
    for part in rest.split("|"):
        pair = _PIPE_PAIR.match(part)
        if pair is not None:
            number = to_number(pair.group(2))
            if number is not None:
                values[normalise_key(pair.group(1))] = number
        else:
            values.update(key_values(part))
    metrics = split_counters(values).metrics
    if not metrics:
        return None
    # The LogParser turns (epoch, batch) into a global step when the second total is not
    # the planned total the run announced (then it is the batches of one epoch).
    return Parsed("bracket-counters", i, n, epoch=float(epoch), total_epochs=epochs,
                  metrics=metrics)


# --- Ultralytics (YOLOv5/v8/11): epoch columns before a per-epoch batch bar ------------------
# `      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size`
# `    153/200      9.87G     0.4639     0.2342     0.8053       1469        640: 100%|...`
_YOLO_ROW = lazy_re.compile(r"^\s*(?P<epoch>\d+)/(?P<epochs>\d+)\s+(?P<cols>[\d.]+G?(?:\s+[\d.]+)+)"
                            r"\s*:?\s*$")


def parse_ultralytics_row(desc: str, columns: tuple[str, ...]) -> Parsed | None:
    """The text before an Ultralytics training bar: the epoch and the losses, named by
    the header row seen before it."""
    match = _YOLO_ROW.match(desc)
    if match is None:
        return None
    values = match.group("cols").split()
    names = columns[1:] if columns and columns[0].lower() == "epoch" else ()
    metrics: dict[str, float] = {}
    for name, text in zip(names, values, strict=False):
        number = to_number(text.rstrip("G"))
        if number is not None and name.lower() not in ("gpu_mem", "instances", "size"):
            metrics[normalise_key(name)] = number
    if "box_loss" in metrics or "cls_loss" in metrics:
        metrics["loss"] = sum(v for k, v in metrics.items() if k.endswith("_loss"))
    return Parsed("ultralytics", epoch=float(match.group("epoch")),
                  total_epochs=int(match.group("epochs")), metrics=metrics)


# Lines that announce the planned number of epochs (`epoches=1000`, a common spelling in
# research code, too).
_EPOCHS_LINE = lazy_re.compile(r"\bmax: (\d[\d,]*) epochs\b|\bNum Epochs = (\d[\d,]*)|"
                          # (a value quoted as a string too: flair's parameters block,
                          # ` - max_epochs: "150"`)
                          r"\bmax_epochs['\"]?\s*[=:]\s*['\"]?(\d+)|"
                          r"\b(?:num_)?epoch(?:e)?s['\"]?\s*[=:]\s*['\"]?(\d+)\b|"
                          # a qualified name: `"num_train_epochs": 3` (Hugging Face's
                          # trainer_state.json), `total epochs: 12`, Time-Series-Library's
                          # args table `  Train Epochs:       10`, CoreNet's `Max. epochs
                          # for training: 30`
                          r"(?:\b|_)(?i:training|train|total|max|num|number of)\.?[ _]"
                          r"(?i:epochs)(?: (?i:for|to) (?i:training|train))?['\"]?\s*[=:]\s*"
                          r"['\"]?(\d+)\b|"
                          r"--(?:num[_-])?epochs[= ](\d+)\b|"
                          # the setting alone at the end of its line (a logger's `[INFO]
                          # Epochs 80` among the run's settings)
                          r"(?:^|\]\s|:\s)\s*(?:[Ee]pochs|EPOCHS)\s*[:=]?\s+(\d+)\s*$|"
                          # a sentence of its own: FANN's `Max epochs  1000000. Desired error:`
                          r"\b(?:[Mm]ax|MAX|[Tt]otal)[ _](?:[Ee]pochs|EPOCHS)\s+(\d+)\.(?:\s|$)|"
                          # said in words: `Starting training for 10 epochs...`, `Training
                          # the model for 50 epochs`, `* The network will run for: 30
                          # epochs` (not a patience: `not improved for 10 epochs`)
                          r"\b(?:[Tt]rain(?:ing)?|[Ff]it(?:ting)?|will (?:run|train))"
                          r"(?: (?:the |a )?(?:model|network|net))? for:?\s+(\d[\d,]*)\s+epochs\b|"
                          # PaddlePaddle v1's command line: `--num_passes=50` (a pass is an epoch)
                          r"--num_passes=(\d+)\b|"
                          # a yacs / CfgNode dump's upper-case keys (`OPTIMIZATION:` /
                          # `  EPOCHS: 30`, `SOLVER.MAX_EPOCH: 12`; Oscar-Paddle, sealed-10)
                          # (or a Python config module's, copied into the log: C^3
                          # Framework's `__C.MAX_EPOCH = 50`)
                          r"(?<![A-Z_])(?:(?:NUM|MAX|TOTAL|TRAIN)_EPOCHS?|EPOCHS)\s*[:=]\s*(\d+)"
                          r"\s*(?:#.*)?$|"
                          # HRNet's and AlphaPose's `TRAIN.END_EPOCH`, in its config's dict
                          # as printed (`'BEGIN_EPOCH': 0, 'END_EPOCH': 270`)
                          r"['\"](?:END|MAX|NUM|TOTAL)_EPOCHS?['\"]\s*:\s*(\d+)\b")


# Singular, in a line of sizes rather than of metrics (`Data size: 149690, batch size: 500,
# training epoch: 30.`), or among a configuration's settings, beside its batch size (a
# hand loop's `{'batch_size': 16, …, 'epoch_num': 200}`, Keras 1's `nb_epoch=200`): in a
# metric line the same words count the epoch trained.
_EPOCH_SIZE = lazy_re.compile(r"\b(?:training|total|max|number of)[ _]epoch['\"]?\s*[=:]\s*"
                              r"(\d+)\b"
                              r"(?!\s*/)|"
                              r"\b(?:epochs?_num(?:ber)?|n_epochs?|nb_epochs?|num_epoch)['\"]?"
                              r"\s*[=:]\s*(\d+)\b(?!\s*/)")


_DICT_EPOCH = lazy_re.compile(r"['\"]epoch['\"]\s*:\s*(\d+)\b(?!\s*/)")
_MEASURED = lazy_re.compile(r"loss|acc|err|score|time", re.IGNORECASE)


def _settings_only(line: str) -> bool:
    """Whether a line names no measure: settings, not a record."""
    return _MEASURED.search(line) is None


def planned_epochs(line: str, sizes: bool = False) -> int | None:
    """The planned epochs a line announces; `sizes`: the line is no metric line, so a
    singular `training epoch: 30` among its sizes is a plan too."""
    match = _EPOCHS_LINE.search(line)
    if match is None and (sizes or "batch" in line):
        match = _EPOCH_SIZE.search(line)
    if match is None and "epoch" in line and "batch_size" in line and _settings_only(line):
        # a configuration's dict as printed, its plan under the singular name beside its
        # batch size and rate (`{'model_name': 'resnet18', 'batch_size': 64,
        # 'training_lr': 0.05, 'epoch': 100, 'local_epoch': 1, …}`): no metric in it
        match = _DICT_EPOCH.search(line)
    if match is None:
        return None
    value = int(next(g for g in match.groups() if g is not None).replace(",", ""))
    return value if value > 0 else None


# `Epoch 2, global step 400000: 'val/AP' was not in top 1` (Lightning's ModelCheckpoint)
_GLOBAL_STEP = lazy_re.compile(r"\bEpoch (\d+), global step (\d+):")


def lightning_global_step(line: str) -> tuple[int, int] | None:
    """(epoch, global step) from Lightning's checkpoint messages."""
    if "global step" not in line:
        return None
    match = _GLOBAL_STEP.search(line)
    return (int(match.group(1)), int(match.group(2))) if match else None


# `[2023-04-18 01:47:21,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=6, lr=[…]`
_DEEPSPEED_STEP = lazy_re.compile(
    r"\[Rank (?P<rank>\d+)\] step=(?P<step>\d+), skipped=(?P<skipped>\d+)")


def parse_deepspeed(segment: str) -> Parsed | None:
    if "skipped=" not in segment:
        return None
    match = _DEEPSPEED_STEP.search(segment)
    if match is None:
        return None
    lr = re.search(r"lr=\[([-+\d.eE]+)", segment)
    metrics = {"skipped_steps": float(match.group("skipped"))}
    if lr is not None:
        number = to_number(lr.group(1))
        if number is not None:
            metrics["lr"] = number
    return Parsed("deepspeed", int(match.group("step")), metrics=metrics)


# `Beginning of Epoch 1/16, Total Micro Batches 460` (DeepSpeed-Chat)
# (step 3, PPO, counts its generation batches: `Beginning of Epoch 1/1, Total Generation
# Batches 120`)
_MICRO_BATCHES = lazy_re.compile(r"Epoch (\d+)/(\d+), Total (?:Micro|Generation) Batches (\d+)")


def deepspeed_chat_plan(line: str) -> tuple[int, int] | None:
    """(epochs, micro-batches per epoch) from DeepSpeed-Chat's epoch banner."""
    match = _MICRO_BATCHES.search(line)
    return (int(match.group(2)), int(match.group(3))) if match else None


# --- 3D Gaussian splatting (graphdeco-inria/gaussian-splatting's train.py) -------------------
# `[ITER 7000] Evaluating test: L1 0.34677238538861277 PSNR 6.254974584579468 [01/01 13:45:38]`
# (and `Evaluating train:` on a sample of the training views): an evaluation per split at
# the iterations the run tests at, the test split's the held-out one.
_SPLAT_EVAL = lazy_re.compile(r"^\[ITER (\d+)\] Evaluating (\w+): L1 (\S+) PSNR (\S+)")


def parse_splatting_eval(segment: str) -> Parsed | None:
    if "Evaluating" not in segment or "[ITER" not in segment:
        return None
    match = _SPLAT_EVAL.search(segment)
    if match is None:
        return None
    split = "train" if match.group(2) == "train" else "eval"
    l1, psnr = to_number(match.group(3)), to_number(match.group(4))
    if l1 is None or psnr is None:
        return None
    return Parsed("gaussian-splatting", int(match.group(1)),
                  metrics={f"{split}/l1": l1, f"{split}/psnr": psnr})


# --- StyleGAN2-ADA, StyleGAN3, StyleGAN-V, StyleGAN-XL (NVlabs' training loop) ------------
# `Training for 3000 kimg...`, then a line a tick: `tick 750   kimg 3000.0   time 2d 14h
# 58m   sec/tick 299.1   sec/kimg 74.92   maintenance 0.1   cpumem 5.42   gpumem 4.37
# reserved 6.36   augment 0.338`. The images shown, in thousands, are its progress (no
# loss is printed); its FIDs come as JSON lines of their own (`{"results": {"fid50k_full":
# 29.3}, …}`).
_STYLEGAN_PLAN = lazy_re.compile(r"^Training for (\d+(?:\.\d+)?) kimg\.\.\.\s*$")
_STYLEGAN_TICK = lazy_re.compile(r"^tick\s+\d+\s+kimg\s+(?P<kimg>\d+(?:\.\d+)?)\s+time\s+.*?"
                                 r"sec/kimg\s+(?P<rate>[\d.]+)")
_STYLEGAN_FIELD = lazy_re.compile(r"\b(augment|gpumem|cpumem)\s+(-?[\d.]+)")


def parse_stylegan(segment: str) -> Parsed | None:
    if segment.startswith("Training for "):
        plan = _STYLEGAN_PLAN.match(segment)
        if plan is not None:
            return Parsed("stylegan", None, round(float(plan.group(1)) * 1000))
        return None
    if not segment.startswith("tick"):
        return None
    tick = _STYLEGAN_TICK.match(segment)
    if tick is None:
        return None
    metrics = {"sec_per_kimg": float(tick.group("rate"))}
    for name, value in _STYLEGAN_FIELD.findall(segment):
        metrics[name] = float(value)
    return Parsed("stylegan", round(float(tick.group("kimg")) * 1000), None, metrics=metrics)


FRAMEWORK_PARSERS = (
    parse_stylegan,
    parse_splatting_eval,
    parse_example_epoch,
    parse_fairseq,
    parse_mmengine,
    parse_timm,
    parse_olmo,
    parse_mockingbird,
    parse_bigdl,
    parse_deepspeed,
    parse_bracket_counters,
    parse_spaced_fields,
    parse_counter_value,
)
