"""The run's plan, as its header lines say it: the planned total of steps, the planned
epochs and the batches in each, the gradient accumulation, and the learning-rate
schedule its configuration names.

A bar's total or a line's `step 5/100` also gives a planned total; those stay with the
parser (a bar's total may turn out to be one epoch's). What a header line announces is
the run's own plan, and the parser trusts it over any bar.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.frameworks import deepspeed_chat_plan, planned_epochs

# Lines that announce the planned length of a run.
_TARGET_LINE = lazy_re.compile(
    r"max_steps[`'\"]?\s*[=:]\s*(\d[\d,]*)|[Tt]otal optimization steps\s*=\s*(\d[\d,]*)|"
    r"\b[Tt]rain(?:ing)? for (\d[\d,]*) (?:steps|iterations|iters)\b|"
    # where a resumed or a planned run goes on to, at its line's end (a DDSP trainer's
    # `Resumed from …/encoder_last.pt at step 20000, continuing to 250000`, `training
    # until step 5000`)
    # a command line's flag of the planned count, its value after a space too (MLX's `python
    # lora.py --model mlx_model --train --iters 600`, `--max_steps 5000`): names only a
    # plan takes (`--num_steps` may be a calibration's, see below)
    r"(?:^|\s)--(?:iters|max[-_](?:steps|iters|iterations)|train[-_]iters|total[-_]steps)"
    r"[= ](\d+)(?!\S)|"
    r"\b(?:[Cc]ontinu(?:e|ing)|[Tt]rain(?:ing)?|[Rr]un(?:ning)?)(?: on)? (?:up to|to|until) "
    r"(?:step |iteration )?(\d[\d,]*)(?: (?:steps|iterations|iters))?\.?\s*$|"
    # (a flag's dump: EstraNet's `train_steps           : 400000`, BERT's `num_train_steps`)
    r"\b(?:max_iter(?:ation)?s?|MAX_ITER(?:ATION)?S?|train_iters|num_training_steps|total_steps|"
    # (names that other tools take too, the run's own only in its arguments' dump,
    # SinGAN's `Namespace(…, num_steps=2000, …)`: a command line's `--num_steps=5` may
    # be a calibration script's, run beside the training)
    r"(?<!--)(?:num_steps|num_iters|num_iterations|total_iters|total_iterations)|"
    r"(?:num_)?train(?:ing)?_steps)\b[\s.=:]*(\d[\d,]*)|"
    # (the total quoted as a configuration dict prints it: OpenGait's `{…, 'restore_hint':
    # 70000, …, 'total_iter': 80000}`; a name no search trial takes, unlike `num_iterations`)
    r"['\"]total_iters?['\"]\s*:\s*(\d[\d,]*)|"
    # (the same named for the model it trains, a hyperparameter dump's `tacotron_train_steps:
    # 2500` in Lip2Wav: not a warm-up's, an evaluation's or a save's)
    r"\b(?!(?:warm|eval|val|test|decay|save|log|ckpt|print)\w*)[a-z][a-z0-9]*_"
    r"(?:num_)?train(?:ing)?_steps\b[\s.=:]*(\d[\d,]*)|"
    # (and the training's own steps as a configuration dict quotes them: Flax's
    # `Hyperparameters: {…, 'num_train_steps': 1000, …}`; not the names a search's
    # trials also take, a hyperopt trial's `"num_iterations": 150.0`)
    r"['\"](?:num_)?train(?:ing)?_steps['\"]\s*:\s*(\d[\d,]*)|"
    # a configuration's total of the steps the run logs, alone on its line as a YAML
    # dump prints it (`  total_pseudo_env_action_steps: 2304` above SB3's tables; a
    # progress line's `total_timesteps: 2304` has company): not a part of the run's (its
    # warm-up's, its evaluations', its saves')
    r"^\s*total_(?!(?:warm|eval|val|test|decay|save|log|ckpt|checkpoint|print)\w*)"
    r"(?:[a-z]+_)*?(?:time)?steps\s*[=:]\s*(\d+)\s*$|"
    # a configuration's `iters: 1000`, last on its line with no epoch beside it (MLX-LM's
    # `Starting training..., iters: 2596`): pix2pix's progress line `(epoch: 1, iters:
    # 700, time: 0.067) G_GAN: …` counts its iterations with the same words, and its
    # count is no plan
    r"^(?![^\n]*(?i:epoch))[^\n]*\biters:\s*(\d[\d,]*)\s*$|"
    # a configuration dict's quoted key (`{'lr': 0.001, …, 'iterations': 45000, …}`): a
    # progress line does not quote its counter
    r"['\"](?:iterations|iters)['\"]\s*:\s*(\d[\d,]*)|"
    # a boosting library's own count of its rounds, quoted in its training file's header
    # (CatBoost's `catboost_training.json`: `"meta":{…,"iteration_count":300,…}`)
    r"['\"](?:iteration_count|num_boost_round)['\"]\s*:\s*(\d[\d,]*)|"
    # a nested config's own field, alone and indented (SECOND's protobuf `train_config {
    # steps: 23200 # 464 * 50`): a progress line is neither
    r"^[ \t]+steps\s*[:=]\s*(\d[\d,]*)\s*(?:#.*)?$|"
    # the plan in words: `12500 max iterations` (EMCAD), `Max iterations: 12500`,
    # `maximum number of steps = 5000` (an evolutionary trainer's generations too: GPUMD's
    # NEP, `(input)   maximum number of generations = 300000.`)
    r"(?<![\d.,])(\d[\d,]*)\s+max(?:imum)?\s+(?:iterations|iters|steps)\b|"
    r"\b[Mm]ax(?:imum)?\s+(?:number\s+of\s+)?(?:training\s+)?(?:iterations|iters|steps|"
    r"generations)\s*[=:]\s*(\d[\d,]*)")
_ACCUMULATION = lazy_re.compile(r"gradient_accumulation_steps[\s=:]+(\d+)")
# The learning-rate schedule a run's configuration names: HF `lr_scheduler_type: cosine`
# (or `SchedulerType.COSINE`), Megatron `lr_decay_style ........ cosine`, a
# `scheduler: CosineAnnealingLR` in a config dump, `--lr_scheduler_type linear`.
_SCHEDULE = lazy_re.compile(r"\b(?:lr_scheduler_type|lr_scheduler|lr_decay_style|lr_schedule|"
                            r"scheduler_type|scheduler)['\"]?(?:\s*[=:]\s*|\s+\.*\s*|\s+)['\"]?"
                            r"(?:<?SchedulerType\.)?([A-Za-z_]{3,40})", re.IGNORECASE)
# The step a checkpoint's name gives: `checkpoint-3048`, `step_3048.pt`, `…/3048`.
_SAVED_STEP = lazy_re.compile(r"(?:(?:checkpoint|ckpt|step|iter|iteration|global_step)[-_]?|[/\\])"
                              r"0*(\d{1,9})(?:\.\w+)?[/\\]?$", re.IGNORECASE)


def target_in(line: str) -> int | None:
    """The planned total of steps a line announces (`max_steps=500`, `Total
    optimization steps = 1,000`), if any."""
    match = _TARGET_LINE.search(line)
    if match is None:
        return None
    text = next(g for g in match.groups() if g is not None)
    value = int(text.replace(",", ""))
    return value if value > 0 else None


def saved_step(path: str) -> int | None:
    """The step a checkpoint's path names (`…/checkpoint-3048`), if any."""
    found = _SAVED_STEP.search(path)
    return int(found.group(1)) if found is not None else None


class RunPlan:
    """What the run's header lines said about its plan (the parser holds one)."""

    def __init__(self) -> None:
        self.announced: int | None = None  # the planned total a header line said
        self.epochs: int | None = None  # planned epochs
        self.per_epoch: int | None = None  # batches per epoch (the lines may say it too)
        self.accumulation = 1  # micro-batches per optimizer step, when the run says
        self.lr_schedule: str | None = None  # the scheduler the configuration names

    def read(self, text: str, parsed: bool) -> int | None:
        """Read a line for the plan; returns the planned total it announces, if any.
        `parsed`: a format read the line (a metric line names no schedule)."""
        announced = None
        if ("steps" in text or "iter" in text or "ITER" in text or "generations" in text
                or ("step" in text and ("until" in text or "ontinu" in text))) \
                and (target := target_in(text)):
            self.announced = announced = target
        # (a line may give both, an arguments' dump `Namespace(…, epochs=20, …,
        # num_iterations=100, …)`: the epochs are read whatever the steps said)
        if "poch" in text or "POCH" in text or "num_passes" in text:
            epochs = planned_epochs(text, sizes=not parsed)
            if epochs is not None:
                self.epochs = epochs
            plan = deepspeed_chat_plan(text)
            if plan is not None:
                # DeepSpeed counts optimizer steps: micro-batches over the accumulation.
                self.epochs, self.per_epoch = plan[0], plan[1] // self.accumulation
                self.announced = self.epochs * self.per_epoch
                return self.announced
        if ("chedul" in text or "decay_style" in text) and not parsed:
            schedule = _SCHEDULE.search(text)
            if schedule is not None:
                self.lr_schedule = schedule.group(1).lower()
        if "accumulation" in text:
            accumulation = _ACCUMULATION.search(text)
            if accumulation is not None and int(accumulation.group(1)) > 0:
                self.accumulation = int(accumulation.group(1))
        return announced
