"""Which babysit metric a TensorBoard scalar is, from its tag and the run it was written in.

Writers spell the same curve many ways: `loss`, `train/loss`, `Loss/train` (the PyTorch
tutorial), `epoch_loss` in a `train/` run (Keras), `eval/loss`, `Loss/val`, `val_loss`,
or `loss` written into an `eval/` run. Each scalar gets a scope (train, eval or none)
from the tag's own parts and from the directories of its run, and a name:

- the loss is `loss` (`eval_loss` in an eval scope), the learning rate `lr`, the
  gradient norm `grad_norm`: the names babysit's rules look for;
- any other tag is kept as written, except that an eval metric whose name does not
  start with an eval word is made to, so babysit's eval rules recognise it: a trailing
  eval word moves to the front (`Accuracy/val` → `val/accuracy`), and a tag written in
  an eval run gets `eval/` (`accuracy` in `exp1/eval/` → `eval/accuracy`).

Which run is the main one, and the prefix other runs' metrics get, is decided by the
target (`events`).
"""

from __future__ import annotations

from babysit import lazy_re

TRAIN_WORDS = frozenset({"train", "training"})
# The prefixes babysit's eval rules recognise (metric_names._EVAL_PREFIX).
EVAL_WORDS = frozenset({"eval", "val", "valid", "validation", "dev"})

LOSS = "loss"
EVAL_LOSS = "eval_loss"
LR = "lr"
GRAD_NORM = "grad_norm"

_LOSS_NAMES = frozenset({"loss", "epoch_loss", "total_loss", "lm_loss", "loss_epoch"})
_LR_NAMES = frozenset({"lr", "learning_rate", "learning-rate", "learningrate",
                       "epoch_learning_rate", "epoch_lr", "lr_0", "lr-0"})
# PyTorch Lightning's LearningRateMonitor: `lr-Adam`, `lr-AdamW`, `lr-SGD` (one optimizer).
_LR_MONITOR = lazy_re.compile(r"^lr[-_](?:adam|adamw|sgd|adafactor|lamb|lion|rmsprop)$")
_GRAD_NAMES = frozenset({"grad_norm", "gradient_norm", "grad-norm", "gradnorm", "global_norm",
                         "grad_norm_total", "total_grad_norm", "gnorm"})
_SCOPED = lazy_re.compile(
    r"^(?P<scope>train|training|eval|val|valid|validation|dev)[_-](?P<name>.+)$")


def scope_of_run(run: str) -> str | None:
    """"train" or "eval" when a directory of the run's path says so (`exp1/eval`,
    `version_0/validation`), else None. The last such directory wins."""
    scope = None
    for part in run.lower().split("/"):
        if part in TRAIN_WORDS:
            scope = "train"
        elif part in EVAL_WORDS:
            scope = "eval"
    return scope


def metric_name(tag: str, run_scope: str | None = None) -> str:
    """The babysit metric for scalar `tag`, written in a run of scope `run_scope`."""
    parts = [p for p in tag.strip("/").split("/") if p]
    if not parts:
        return tag
    lowered = [p.lower() for p in parts]
    scope = run_scope
    name_parts = lowered
    if len(parts) >= 2 and lowered[0] in _WORDS:  # `train/loss`, `eval/loss`
        scope, name_parts = _scope(lowered[0]), lowered[1:]
    elif len(parts) >= 2 and lowered[-1] in _WORDS:  # `Loss/train`, `Loss/val`
        scope, name_parts = _scope(lowered[-1]), lowered[:-1]
    name = "/".join(name_parts)
    joined = _SCOPED.match(name)  # `val_loss`, `train_loss`
    if joined is not None:
        scope, name = _scope(joined["scope"]), joined["name"]
    role = _role(name)
    if role == LOSS:
        return EVAL_LOSS if scope == "eval" else LOSS
    if role is not None:
        return role
    kept = "/".join(parts)
    if scope == "eval" and not _EVAL_FIRST.match(lowered[0]):
        if len(parts) >= 2 and lowered[-1] in EVAL_WORDS:  # `Accuracy/val` → `val/Accuracy`
            return "/".join([lowered[-1], *lowered[:-1]])
        return "eval/" + kept  # `accuracy` written in an eval run
    return kept


_WORDS = TRAIN_WORDS | EVAL_WORDS
_EVAL_FIRST = lazy_re.compile(r"^(?:eval|val|valid|validation|dev)(?:$|[_-])")


def _scope(word: str) -> str:
    return "eval" if word in EVAL_WORDS else "train"


def _role(name: str) -> str | None:
    """LOSS, LR or GRAD_NORM for the names of those curves; None for any other."""
    if name in _LOSS_NAMES:
        return LOSS
    last = name.rsplit("/", 1)[-1]
    optimizer = name.startswith(("optimizer/", "optim/"))
    if name in _LR_NAMES or _LR_MONITOR.match(name) or (optimizer and last in _LR_NAMES):
        return LR
    if name in _GRAD_NAMES or (optimizer and last in _GRAD_NAMES):
        return GRAD_NORM
    return None
