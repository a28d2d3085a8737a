"""Checkpoints the run saved, and which one can be trusted.

A checkpoint whose save failed is never named. One written while a blocker is open
(after the first NaN, say) holds the damage, so it is not one to go back to either.
Among the rest, "best" means the best evaluation when the run evaluates — the newest
checkpoint of an overfitting run is its worst — and otherwise the newest complete one,
labelled as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise


@dataclass(frozen=True)
class CheckpointChoice:
    path: str
    why: str  # "best eval_loss (1.84 at step 300)", "newest complete save", ...
    # Whether the run itself kept it as its best (a save it called best, a file named so),
    # not babysit's pick among the periodic saves it left (which the user must go back to).
    runs_own: bool = False


@dataclass(frozen=True)
class _Save:
    path: str
    step: int | None
    eval_key: str | None
    eval_value: float | None
    direction: int  # +1: higher eval is better, -1: lower is better, 0: no eval
    # Where no step is printed: the anomalies raised before it (which came first) and the
    # records with figures read before it (how far into the run).
    order: tuple[int, int] = (0, 0)


# A file the run named for its best weights (`model_best.pth`, `best_model.h5`,
# `checkpoint_best.pt`, `best-epoch=3.ckpt`).
_NAMED_BEST = re.compile(r"(?i)(?:^|[^a-z])best(?:[^a-z]|$)")

# Cadences a run may go past its last save before the next one is called overdue.
OVERDUE_FACTOR = 2.5


class Checkpoints:
    def __init__(self) -> None:
        self._saves: list[_Save] = []
        self._failed: dict[str, None] = {}  # in the order they failed (a bounded set)
        self._named_best: str | None = None  # the one the run itself called best
        self._named_best_step: int | None = None
        self._unnamed_best_step: int | None = None  # the last best written without a path
        self._named_best_order = (0, 0)  # anomalies raised and records read before it

    def saved(self, path: str, step: int | None, blocked: bool,
              evaluation: tuple[str, float, int] | None = None,
              order: tuple[int, int] = (0, 0)) -> None:
        """A save began; `evaluation` is the run's main eval metric at that moment,
        `order` how many anomalies had been raised and records read before it."""
        if not path or blocked:
            return
        key, value, direction = evaluation if evaluation else (None, None, 0)
        before = next((s for s in self._saves if s.path == path), None)
        if before is not None and _NAMED_BEST.search(path) and value is not None \
                and before.eval_value is not None and before.eval_key == key \
                and (value - before.eval_value) * direction < 0:
            # A file named for the best, "written" again at a worse evaluation than the
            # last time: the run names it again (`最佳模型已保存到: …/best_model.pth` as it
            # ends), it does not overwrite it with worse weights.
            return
        self._saves = [s for s in self._saves if s.path != path]
        self._saves.append(_Save(path, step, key, value, direction, order))
        del self._saves[:-200]  # a long run's early saves are not the ones anyone wants

    def failed(self, path: str) -> None:
        """The save of `path` (or, without a path, the newest save) did not complete."""
        if not path and self._saves:
            path = self._saves[-1].path
        if path:
            self._failed[path] = None
            if len(self._failed) > 200:  # bounded: a run failing every save all month
                del self._failed[next(iter(self._failed))]

    def save_steps(self) -> list[int]:
        """The steps of the saves that began (and did not fail): the run's cadence."""
        return [s.step for s in self._saves if s.step is not None and s.path not in self._failed]

    def overdue(self, step: int) -> tuple[int, int] | None:
        """(cadence, last save's step) when the run saved at a regular cadence and has now
        gone `OVERDUE_FACTOR` cadences past its last save without another; else None."""
        steps = sorted(set(self.save_steps()))
        if len(steps) < 2:
            return None
        gaps = sorted(b - a for a, b in pairwise(steps))
        cadence = gaps[len(gaps) // 2]
        if cadence <= 0 or step - steps[-1] <= OVERDUE_FACTOR * cadence:
            return None
        return cadence, steps[-1]

    def named_best(self, path: str, blocked: bool, step: int | None = None,
                   order: tuple[int, int] = (0, 0)) -> None:
        """The run named its best checkpoint (`path`), or wrote its best without naming
        the file (`path` empty: `-> Best fine-tuned model saved.` at each improvement).
        A path named after such saves (`Loading best fine-tuned model from …` at the end)
        is the file the last of them wrote: its step is that save's, not the reload's."""
        if blocked:
            return
        if not path:
            self._unnamed_best_step = step
            return
        self._named_best = path
        self._named_best_order = order
        unnamed = self._unnamed_best_step
        self._named_best_step = unnamed if unnamed is not None and (
            step is None or unnamed <= step) else step

    def written_at(self, path: str) -> int | None:
        """The step at which `path` was last written (a best checkpoint saved again at
        each improvement: its last improvement), None when unknown."""
        saved = [s.step for s in self._saves if s.path == path and s.step is not None]
        if saved:
            return saved[-1]
        return self._named_best_step if path == self._named_best else None

    def written_order(self, path: str) -> tuple[int, int] | None:
        """How many anomalies had been raised and records read when `path` was last
        written, if it was."""
        orders = [s.order for s in self._saves if s.path == path]
        if orders:
            return orders[-1]
        return self._named_best_order if path == self._named_best else None

    def _failed_save(self, path: str) -> bool:
        """Whether any file of this checkpoint failed to be written (a failure names
        `checkpoint-1000/model.safetensors`, the save `checkpoint-1000`)."""
        return any(_covers(path, failed) for failed in self._failed)

    def choice(self) -> CheckpointChoice | None:
        good = [s for s in self._saves if not self._failed_save(s.path)]
        scored = [s for s in good if s.eval_value is not None and s.direction]
        if self._named_best and not self._failed_save(self._named_best) and not any(
                s.path == self._named_best for s in scored):
            # The run kept its own best by its own measure (mmcv's `Now best checkpoint
            # is saved as best_bbox_mAP_epoch_9.pth.`), written as that measure peaked:
            # babysit's pick among the periodic saves beside it could only be worse.
            return CheckpointChoice(self._named_best, "the run's best", runs_own=True)
        if scored:
            best = max(scored, key=lambda s: (s.eval_value or 0.0) * s.direction)
            at = f" at step {best.step}" if best.step is not None else ""
            return CheckpointChoice(best.path, f"best {best.eval_key} ({best.eval_value:.4g}"
                                               f"{at})",
                                    runs_own=best.path == self._named_best
                                    or _NAMED_BEST.search(best.path) is not None
                                    or _each_better(scored))
        if self._named_best and not self._failed_save(self._named_best):
            return CheckpointChoice(self._named_best, "the run's best", runs_own=True)
        if good:
            return CheckpointChoice(good[-1].path, "newest complete save")
        return None

    def good_path(self) -> str | None:
        chosen = self.choice()
        return chosen.path if chosen else None


def _each_better(scored: list[_Save]) -> bool:
    """Whether each save came at a better evaluation than every save before it: a run
    that saves only when its evaluation improves (nanoGPT's `always_save_checkpoint =
    False`, Keras's `save_best_only=True` under any file name) keeps its best by its own
    rule. Periodic saves go on through a decline, and so are not all improvements."""
    best: float | None = None
    for save in scored:
        value = (save.eval_value or 0.0) * save.direction
        if best is not None and value <= best:
            return False
        best = value
    return True


def _covers(save: str, failed: str) -> bool:
    """Whether `failed` is the checkpoint `save` or a file inside it, however either is
    spelled (one absolute, the other relative to the run's directory)."""
    saved = [p for p in save.replace("\\", "/").split("/") if p not in ("", ".")]
    parts = [p for p in failed.replace("\\", "/").split("/") if p not in ("", ".")]
    if not saved:
        return False
    for end in range(1, len(parts) + 1):
        prefix = parts[:end]
        if prefix[-1] != saved[-1]:
            continue
        shorter = min(len(prefix), len(saved))
        if prefix[-shorter:] == saved[-shorter:]:
            return True
    return False
