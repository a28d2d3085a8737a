"""Sentences in which a run says its training is over, in the words scripts use.

Scripts say it in many ways, but the sentence has one shape: a verb of ending (finish,
complete, done, end, over) and what ended (training, the training loop, optimization,
fitting, fine-tuning, the run, the experiment), in either order — `Training COMPLETE`,
`[jaxline] training loop finished.`, `End of training`, `Finish training: the best
accuracy is …`, `End training....`, `Process completed successfully.`, `训练完成`,
`预训练任务圆满结束`,
`Training abgeschlossen`. A list of frameworks' phrases would never be complete; the
verb and the object are.

Not an end: the same words about a part of the run (`Training epoch 3 done`, `Finished
training stage 1`, `Fold 2 training complete`, `epoch 3/10 done`), in a negation or a
condition (`training is not done`, `wait until training is done`, `when training
completes`, `after training finishes`), or in a setting (`training_done: false`).
Whether the run then stops there is the lifecycle's to judge (a sentence printed well
short of the plan is an early end; one followed by more training was a stage's).
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.log_prefix import message

# (`solving`: a solver's run, py-faster-rcnn's `train_net` ends on `done solving` after
# Caffe's last snapshot)
# (`trainer`, `learner`: the process that trains, an actor-learner RL run's `Learner
# finished, episode: 2000, terminate condition : True`)
# (a search for hyperparameters trains each of its trials: `Multi-stage tuning completed`,
# `HYPERPARAMETER SEARCH COMPLETE`; a search of another kind, a beam's, is no training)
# (a cross-validation is the training of each of its folds: `LOOCV complete in 2.37h`,
# `Cross-validation finished`, `5-fold CV done`)
_THING = (r"(?:(?:pre-?|fine-?|re)?train(?:ing|er)?|optimi[sz]ation|fit(?:ting)?|fine-?tuning|"
          r"learn(?:ing|er)|experiment|run|solving|"
          # (reinforcement learning by its letters: a DQN script's last print, `RL end`)
          r"d?rl|"
          # (a hyperparameter search trains each of its trials: `Multi-stage tuning
          # completed.`, `HYPERPARAMETER SEARCH COMPLETE`, `Sweep finished`)
          r"(?:(?:multi-stage|hyper-?parameter|grid|random|architecture|hp)\s+)?"
          r"(?:tuning|sweep)|(?:hyper-?parameter|grid|random|architecture|hp)\s+search|"
          r"(?:(?:\d+|k)[- ]?fold\s+|loo)?(?:cross[- ]?validation|cv))")
_PART = r"(?:\s+(?:loop|run|process|job|phase|session|procedure|script))?"
# A count of what was done (`10000 train steps`, `274 epochs`, `5,000 iterations`), in
# any unit an outer loop counts (`all 10 sequential rounds`: a federated simulation's;
# episodes, generations), with one word of its kind between — not a warm-up's or an
# evaluation's (`100 warmup steps`, `10 evaluation episodes`: a part of the run).
_COUNT = (r"\d[\d,]*\s+(?:(?!warm|burn|eval|valid|test)[a-z-]{3,}\s+)?"
          r"(?:steps|iterations|iters|epochs|epoches|updates|rounds|episodes|generations|runs|folds|"
          r"seeds|trials|repeats|repetitions)")
# Said after the thing (`training finished`); present tenses (`training ends at step
# 1000`, `completes in 3 h`) are plans and forecasts, not ends.
# (`success`, `successful`: MindSpore's model zoo ends on `train success`; not a
# measure of it, an RL run's `train success rate: 0.5`)
_ENDED = (r"(?:finished|complete[d]?|done|ended|end|over|succeeded|"
          r"success(?:ful)?(?![ _/-]*(?:rate|ratio|count|prob|[%:=(\d]))|terminated normally)")
# What the training was of, named after it (YOLOX's `Training of experiment is done and
# the best AP is 58.41`): one word, not a part of the run (`training of epoch 3`).
_OF_WHAT = (r"(?:\s+of\s+(?:the\s+)?(?!(?:epoch|fold|stage|step|phase|batch|iter|round|"
            r"cycle|part|task|layer|head|block|level)\w*\b)[A-Za-z][\w-]*)?")
# How much of it, in between: `for 100/100 epochs` (the whole plan, as the count says).
_HOW_MUCH = (r"(?:\s+for\s+(?P<done>\d+)\s*/\s*(?P=done)\s+"
             r"(?:epochs|epoches|steps|iterations|iters|rounds|episodes))?")
# Said before it (`End of training`, `Finish training`, `done training`).
_ENDING = r"(?:finish(?:ed)?|complete[d]?|done|end(?:ed)?|end[\s_-]+of)"
# Up to two words between a thing and its ending, none a negation.
_BETWEEN = r"(?:(?!(?:no|not|nicht|non|pas|n[aã]o|kein\w*)\b)[\w-]+\s+){0,2}?"
_SAID = lazy_re.compile(
    # the thing, then that it ended: `Training COMPLETE`, `training loop finished`,
    # `Training has been completed`, `Experiment successfully completed`
    # (a tag in brackets says the same: `[train] done.`)
    # (with how much of it in between: Dual-Path-RNN's `Training for 100/100 epoches
    # done!`)
    rf"\b{_THING}{_PART}{_OF_WHAT}{_HOW_MUCH}[\]):]?\s+(?:is\s+|has\s+(?:been\s+)?|was\s+|"
    rf"successfully\s+|now\s+)*{_ENDED}\b|"
    # how much it did, and that it is done: `Done 10000 train steps.`, `Finished 50
    # epochs`, `274 epochs completed in 35.9 hours.`
    rf"\b{_ENDING}\s+(?:all\s+)?{_COUNT}\b|"
    rf"(?<![\d.,/]){_COUNT}\s+(?:were\s+|have\s+been\s+)?(?:finished|completed|done)\b|"
    # the line opens on the ending, then where the loop stood: `Completed at episode:
    # 109` (a policy-gradient CartPole script, sealed-19), `Finished after 5000 steps`;
    # or on an RL task solved, which ends its loop (pytorch/examples' REINFORCE and
    # actor-critic: `Solved! Running reward is now 195.3 and …`)
    rf"^\W*(?:{_ENDING})\s+(?:at|after)\s+(?:the\s+)?(?:(?:epoch|step|iteration|iter|episode|"
    r"update|round|generation)s?\b[\s:=#]*\d[\d,]*(?![\d,]|\s*(?:/|of\b)\s*\d)|"
    r"\d[\d,]*\s+(?:epochs|steps|iterations|iters|episodes|updates|rounds|generations)\b)|"
    r"^\W*(?:Environment\s+|Task\s+)?[Ss]olved\s*(?:!|\bat\s+episode[\s:=#]*\d+\b|"
    r"\bafter\s+\d+\s+episodes\b)|"
    # a script that tags each line with its stage (`[data] …`, `[train] …`, `[epoch 001]
    # …`, `[checkpoint] saved …`) opens its last on the stage of ending: `[done]
    # node_ckpt=…/linker_node_diffusion.pt` (a PROTAC diffusion trainer's two stages)
    r"^\[(?:done|finished|complete[d]?|end)\](?:[\s:]|$)|"
    # a quasi-Newton optimiser's own word that it stopped (SciPy's L-BFGS-B, behind TF1's
    # ScipyOptimizerInterface in Raissi's physics-informed networks: `INFO:tensorflow:
    # Optimization terminated with:`, then its message, `CONVERGENCE: REL_REDUCTION_OF_F_
    # <=_FACTR*EPSMCH`, in quotes; `Optimization terminated successfully.` of its other
    # methods)
    r"\bOptimization terminated (?:successfully\b|with:\s*$)|"
    # the line opens on everything done (a job script's `=== ALL DONE Fr 29. Mai 20:13 ===`
    # after its last model, `All done!`; not a clause of what comes next, `all done, now
    # testing model`)
    r"^\W*(?:[Aa]ll|ALL)\s+(?:done|DONE|[Ff]inished|FINISHED|[Cc]omplete[d]?|COMPLETED?)\b"
    r"(?![,;]\s*\w)|"
    # (the words the other way round, the whole line: a KB-completion trainer's `done all`)
    r"^\W*(?:[Dd]one|DONE|[Ff]inished|FINISHED)\s+(?:all|ALL)\W*$|"
    # the model said trained, with how much or how long it took: `Model trained in 100
    # epochs.`, `Trained for 50 epochs`, `The network was trained in 253.4 seconds`
    rf"^\W*(?:the\s+)?(?:(?:final\s+)?(?:model|network|net|classifier|agent|policy)\s+"
    rf"(?:was\s+|has\s+been\s+|is\s+)?)?trained\s+(?:in|for|after)\s+(?:{_COUNT}\b|"
    r"\d+(?:\.\d+)?\s*(?:s|sec|secs|seconds|min|mins|minutes|h|hrs|hours)\b)|"
    # (or said alone, the whole line: a federated CheXpert notebook's `Model trained` after
    # its last round; `The model has been trained successfully.`)
    r"^\W*(?:the\s+)?(?:final\s+)?(?:model|network|net|classifier|agent|policy)\s+"
    r"(?:was\s+|has\s+been\s+|is\s+)?(?:successfully\s+)?trained(?:\s+successfully)?"
    r"\s*[.!]*\s*$|"
    # the ending, then the thing: `End of training`, `Finish training`, `Done training`,
    # `finished run`, `Completed the training`; a model's name between (EasyTPP's `End
    # NHP train! Cost time: 0.552m`), not a part of the run or a verb of its own (`Done
    # loading training data`, `End of epoch training`)
    rf"\b{_ENDING}\s+(?:the\s+)?(?:(?!\w+ing\b|(?:data|dataset|epoch|batch|step|stage|"
    r"phase|fold|round|warm-?up|eval\w*|valid\w*|test\w*|pre|first|second|initial)\b)"
    rf"[A-Za-z][\w-]*\s+)?{_THING}\b|"
    # the whole process, said to have succeeded: `Process completed successfully.`
    r"(?<![\w-])(?<!data )(?:the\s+)?(?:whole\s+|entire\s+)?process\s+(?:has\s+)?"
    r"(?:finished|completed)\s+successfully\b|"
    # other languages: Chinese, Japanese, Korean, German, French, Spanish, Portuguese,
    # Italian, Russian
    r"训练(?:任务|过程|流程)?(?:已经?|已)?(?:圆满|顺利|全部|成功)?(?:完成|结束|完毕)|"
    r"(?:完成|结束)训练|学習(?:が)?(?:完了|終了)|"
    r"(?:학습|훈련)\s*(?:이\s*)?(?:완료|종료)|"
    # (a word or two may come between, never a negation: `ENTRENAMIENTO FINE-TUNING
    # COMPLETADO`, `Training des Modells abgeschlossen`)
    rf"\bTraining\s+{_BETWEEN}(?:ist\s+)?(?:abgeschlossen|beendet|fertig)\b|"
    rf"\bentra[iî]nement\s+{_BETWEEN}(?:est\s+)?termin[ée]|"
    rf"\bentrenamiento\s+{_BETWEEN}(?:ha\s+)?(?:completado|finalizado|terminado)|"
    rf"\btreinamento\s+{_BETWEEN}(?:foi\s+)?(?:conclu[ií]do|finalizado)|"
    rf"\baddestramento\s+{_BETWEEN}(?:è\s+)?(?:completato|terminato)|"
    r"\bhuấn luyện\s+(?:đã\s+)?(?:xong|hoàn tất|hoàn thành|kết thúc)|"
    # (the ending, then the thing, as `End of training` says it: Spanish `Fin
    # entrenamiento`, `Fin del entrenamiento`, Portuguese `Fim do treinamento`, French
    # `Fin de l'entraînement`, Italian `Fine dell'addestramento`, German `Ende des
    # Trainings`)
    r"\b(?:fin|final|fim)\s+(?:del?\s+|do\s+|da\s+|de\s+l['’])?"
    r"(?:entrenamiento|treinamento|treino|entra[iî]nement)\b|"
    r"\bfine\s+(?:dell['’]\s*)?addestramento\b|\bende\s+des\s+trainings?\b|"
    r"обучение\s+(?:было\s+)?(?:завершено|закончено|окончено)",
    re.IGNORECASE)
# A cheap test first, on the line in lower case (substring tests: a regular expression
# here costs more than the rest of a line's parse): most lines have none of these.
_OTHER_LANGUAGES = ("训练", "学習", "학습", "훈련", "заверш", "закончен", "окончен")


def _may_say(text: str) -> bool:
    low = text.lower()
    if "fini" in low or "complet" in low or "done" in low or "end" in low or "over" in low \
            or "succe" in low or "termin" in low or "fertig" in low or "conclu" in low \
            or "finaliz" in low or "abgeschlossen" in low or "solved" in low \
            or "trained" in low or "fin " in low or "fim " in low or "fine " in low:
        return True
    return not text.isascii() and any(word in low for word in _OTHER_LANGUAGES)


# Words before the sentence that make it a condition, a wish or a negation.
_NOT_YET = lazy_re.compile(r"(?i)\b(?:not|never|no|before|until|till|unless|when|whenever|once|"
                           r"after|if|will|would|should|wait(?:ing)?(?:\s+for)?|until|to\s+be)"
                           # (a word of its own: not a logger's `trainer:after_train:195 -`)
                           r"(?!\w)\W*"
                           r"(?:\w+\W+){0,3}$")
# Words after it that make it a part of the run: `… for epoch 3`, `… of stage 1`.
# (Not the step it stopped at, named as a field: GluonNLP's `Finish training step: 389`,
# once, after the last epoch; a per-step line would recur.)
_PART_OF_RUN = lazy_re.compile(
    r"(?i)^\W*(?:for\s+|of\s+|in\s+|on\s+)(?:the\s+)?(?:step|iteration|iter)\b|"
    r"^\W*(?:for\s+|of\s+|in\s+|on\s+)?(?:the\s+)?(?:epoch|stage|phase|"
                          r"fold|round|task|batch|(?:step|iteration|iter)(?!s?\s*[:=]\s*\d)|"
                          r"cycle|block|level)\b|"
                          # (a number after it, not the clock's time said in brackets:
                          # `--- Fin entrenamiento (17:57:05) ---`)
                          r"^(?![\s(\[]*\d{1,2}:\d{2})\W*#?\d")
# Words before it that make it a part of the run: `Epoch 3 training done`, `Fold 2 …`.
_PART_BEFORE = lazy_re.compile(r"(?i)\b(?:epoch|stage|phase|fold|round|task|cycle|level)\s*"
                               r"[#:=]?\s*\[?\d+(?:\s*/\s*\d+)?\]?\W*$|\bper[-\s]epoch\W*$|"
                               # `第3轮训练完成`: the third round's training
                               r"第\s*\d+\s*(?:轮|次|个|阶段|期)\s*$")
_COUNTER = lazy_re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")
# Lightning's `Trainer.fit` stopped: `max_epochs=6000` reached.`, `Reached max_steps`,
# `Reached the maximum number of iterations`: the run says it reached its own plan (its
# steps, or the time it was given).
_PLAN_REACHED = lazy_re.compile(
    r"(?i)`?max_(?:steps|epochs|iters?|iterations)\s*=\s*\d+`?\s+reached|"
                           r"\breached\s+(?:the\s+)?(?:max(?:imum)?[_\s]+(?:number\s+of\s+)?"
                           r"(?:steps|epochs|iters?|iterations)|max_(?:steps|epochs|iters?))\b|"
                           # the count's limit named as reached, in the unit the loop counts
                           # (TensorNEAT's `Generation limit reached!`, `Max generations
                           # reached`, `maximum number of iterations reached`)
                           r"\b(?:step|epoch|iteration|iter|generation|episode|round|update)s?"
                           r"\s+(?:limit|budget|cap)\s+(?:has\s+been\s+|was\s+|is\s+)?reached\b|"
                           r"\bmax(?:imum)?\s+(?:number\s+of\s+)?(?:steps|epochs|iterations|iters|"
                           r"generations|episodes|rounds|updates)\s+(?:has\s+been\s+|was\s+)?"
                           r"reached\b|"
                           # its own time budget: `stopping_early: wallclock_cap`, Lightning's
                           # `Time limit reached. … Signaling Trainer to stop.` (not a
                           # scheduler's kill, `DUE TO TIME LIMIT`: the run did not stop itself)
                           r"\bstopping[_ ]early:?\s*(?:max_)?wall[_-]?clock"
                           r"(?:[_ ]?(?:cap|limit|budget))?\b|"
                           r"(?<!job )\bwall[_-]?clock[_ ](?:cap|limit|budget)\s+"
                           r"(?:was\s+)?reached\b|"
                           r"\breached\s+(?:the\s+)?(?:max(?:imum)?[_\s]+)?wall[_-]?clock[_ ]?"
                           r"(?:cap|limit|budget|time)\b|"
                           r"\bTime limit reached\b.{0,80}\bSignaling Trainer to stop\b|"
                           # a script's own time flag named as reached: `reached --max-seconds
                           # 19800, stopping` (a learned codec's loop), `reached max_time`, `reached
                           # --max-hours 6`: the budget the command line gave it, spent
                           r"\breached\s+(?:the\s+)?(?:--?)?max[_-](?:seconds|secs|time|minutes|"
                           r"mins|hours|duration|wall[_-]?time)\b")


def says_finished(text: str) -> bool:
    """Whether a line says the run's training is over (see the module's docstring)."""
    if not _may_say(text):
        return False
    if _said_in(text):
        return True
    # (its words behind a logger's head too, `2018-03-24 19:44:50,217 INFO done all`: the
    # sentence's own opening is where the message starts)
    said = message(text)
    return said != text and _said_in(said)


def _said_in(text: str) -> bool:
    for match in _SAID.finditer(text):
        before, after = text[: match.start()], text[match.end():]
        if _NOT_YET.search(before) or _PART_BEFORE.search(before) \
                or _PART_OF_RUN.search(after):
            continue
        # `training done: epoch 3/10`: a part of the run (a date before the sentence,
        # `[12/22 19:32:15]`, is not a counter).
        return all(int(m.group(1)) >= int(m.group(2))
                   for m in _COUNTER.finditer(text, match.start()))
    return False


def names_a_part(before: str) -> bool:
    """Whether the words before a sentence of ending name a part of the run (`Epoch: 42
    training finished.` in NCRF++'s log of 100 epochs): that part ended, not the run."""
    return _PART_BEFORE.search(before) is not None


def says_plan_reached(text: str) -> bool:
    """Whether a line says the run stopped at its own planned total (Lightning's
    `` `Trainer.fit` stopped: `max_epochs=6000` reached.``)."""
    return ("eached" in text or "early" in text) and _PLAN_REACHED.search(text) is not None
