"""The closing block: what a log says after its last training record, judged once.

A run that finished prints something after its last training step, once: a sentence
that training is over in the script's own words (the PyTorch CIFAR-10 tutorial's
`Finished Training`, GCN's `Optimization Finished!`, a bare `Done!` or `完成！`), the final
evaluation (`Test accuracy: 0.91`, DL4J's `====Evaluation Metrics====` block, `Final
PPO metrics: …`), a summary (Vowpal Wabbit's `finished run` / `average loss = …`,
xgboost's `best_iteration`, the best epoch named: `The best epoch is: 54`), the time it
took (`Total time: 0:13:00`, `It took 12.3 seconds`). No list of phrases can hold every
script's words; their shape is common to all of them: lines that follow the last
training record, that the run did not print between its records before (a per-epoch
`Test accuracy` is an evaluation, not the end), with a closing word in them.

The lines after the last training record are kept as they come (a few dozen at most) and
judged at the end of each read, not per line. The block is evidence only once the log
has stopped (a live run may go on training), and it is checked against the plan where
the run announced one (see `core.lifecycle`): well short of it, the run ended early.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.completion_words import says_finished
from babysit.parsing.launch_ends import LaunchEnds, start_up_shape
from babysit.parsing.log_prefix import message
from babysit.parsing.shapes import template
from babysit.parsing.shell_prompts import is_job_report

CLOSING = "closing-block"  # a completion detail (see `core.lifecycle`)
CELL_ENDED = "cell-ended"  # one more: a notebook displayed the cell's value (`_DISPLAYED`)

# Lines kept after the last training record (those with a closing word in them): a
# closing block is short; a long tail of other output keeps its first ones.
_KEPT = 48
# Templates of closing-looking lines the run printed between its records, remembered.
_MAX_RECURRING = 256

# Words that close a run, in any of the lines of the block.
_CLOSING_WORDS = lazy_re.compile(
    # the run says it is over: `Finished Training`, `training is done`, `Optimization
    # Finished!`, `done training`, `finished run`, `Done!` or `finish` alone on its line
    # (or a search over runs: `LR sweep complete. 40 runs in …`, `Grid search done`)
    r"\b(?:[Tt]rain(?:ing)?|TRAINING|[Oo]ptimi[sz]ation|[Ff]itting|[Ll]earning|run|[Rr]un|"
    r"[Ee]xperiment|[Ss]weep|SWEEP|(?:[Gg]rid|[Rr]andom|[Hh]yperparameter|HP) [Ss]earch|"
    r"[Tt]uning)\s+(?:is\s+|has\s+|was\s+)?(?:[Dd]one|[Ff]inished|FINISHED|[Cc]ompleted?|"
    r"[Ee]nded|[Oo]ver)\b|"
    # (the same in capitals: an AlphaZero chess loop's `TRAINING COMPLETE` banner)
    r"\b(?:TRAINING|TRAIN|RUN|EXPERIMENT|SWEEP|OPTIMI[SZ]ATION)\s+(?:IS\s+|HAS\s+|WAS\s+)?"
    r"(?:DONE|FINISHED|COMPLETED?|ENDED|OVER)\b|"
    r"\b(?:[Dd]one|[Ff]inished|FINISHED|[Cc]ompleted?|COMPLETED?)\s+(?:the\s+)?(?:[Tt]raining|"
    r"TRAINING|[Oo]ptimi[sz]ation|run|[Ff]itting)\b|"
    # the trained whole written to the run's output folder (spaCy's `spacy train` ends on
    # `✔ Saved pipeline to output directory`, the folder's path on the next line)
    r"\b[Ss]aved\s+(?:the\s+)?(?:final\s+|trained\s+)?(?:model|pipeline|weights)\s+to\s+"
    r"(?:the\s+)?output\s+director(?:y|ies)\b|"
    # the program said finished running, by its own name (GPUMD's `Finished running nep.`)
    r"^\W*(?:[Dd]one|[Ff]inished|FINISHED|[Cc]ompleted)\s+(?:running|executing)\s+[\w.-]+"
    r"[.!]?\s*$|"
    # in the present tense, alone on its line (ProtoCell4P's `Training Ends`, before its
    # test set's evaluation)
    r"^\W*(?:[Tt]raining|TRAINING|[Oo]ptimi[sz]ation)\s+(?:[Ee]nds|ENDS|[Ff]inishes|"
    r"[Cc]ompletes)\W*$|"
    # the model said trained for its count (PyLaia's `Model has been trained for 40
    # epochs (641 steps)`)
    r"\b(?:[Mm]odel|[Nn]etwork|[Nn]et)\s+(?:has been|was|is)\s+trained\s+for\s+\d+\s+"
    r"(?:epochs?|steps?|iterations?|updates?)\b|"
    # the time it took, said of the training (Selene's `Took 216.35 to train and test
    # this model.`)
    r"^\W*(?:[Ii]t\s+)?[Tt]ook\s+[\d.:]+\s*\w*\s+to\s+train\b|"
    # (in any case: `=== ALL DONE ===`, `All Done!`)
    r"^\W*(?i:done|finish(?:ed)?|complete[d]?|all\s+done)\W*$|"
    # the word opening a sentence of the run's summary (a char-level GPT's last line,
    # `done. best val 1.0157 (1.4654 bpc)`), or after the work's own name with where its
    # result went (`dpo done -> checkpoints\tiny-18m-dpo\last.pt`)
    # (its figure's name joined by underscores: a RoBERTa classifier's `done.
    # best_val_loss=0.1131`)
    r"^\W*(?i:done|finished|complete[d]?)[.!]\s+(?i:best|final|total|results?|saved?|"
    r"model|test|val|eval|time|took|elapsed)(?:\b|_)|"
    r"^\W*(?!(?i:sav|load|download|prepar|preprocess|read|writ|build|init|compil|copy|"
    r"extract|fetch|epoch|batch|step|iter|fold|round|warm))[A-Za-z][\w-]*"
    r"\s+(?i:done|finished|complete[d]?)\s*(?:->|→|=>)\s*\S+|"
    # (`All Finished - time = 5629.8`: a MATLAB script's last line, its time after it;
    # `Done: 2076.7 seconds`, a benchmark script's, the time alone)
    r"^\W*(?i:all\s+(?:done|finished|complete[d]?))\s*(?:[-,:]\s*(?i:time|elapsed)\b.*)?$|"
    r"^\W*(?i:(?:all\s+)?(?:done|finished|complete[d]?))\s*[-,:]\s*[\d.:]+\s*"
    r"(?i:s|sec|secs|seconds|min|mins|minutes|h|hrs|hours)\W*$|"
    # the program itself said finished (gensim's example's `*** The program finished.
    # ***`, `Script completed.`); not on a failing exit status
    r"^\W*(?i:the\s+)?(?i:program|script)\s+(?:has\s+|is\s+)?(?i:finished|completed|ended|done)"
    r"\b(?!\s+with\s+(?:exit\s+)?(?:code|status)\s*[:=]?\s*[1-9])|"
    # a status token in capitals, the words joined (`STAGE3B_FORMAL_TRAINING_COMPLETE
    # {'status': 'COMPLETE', …}`, `TRAINING_DONE`, `RUN_FINISHED`)
    r"(?<![A-Za-z0-9_])(?:[A-Z0-9]+_)*(?:TRAIN(?:ING)?|RUN|JOB|EXPERIMENT)_(?:COMPLETED?|DONE|"
    r"FINISHED|SUCCEEDED)(?![A-Za-z])|"
    # the same word alone in Chinese, Japanese or Korean: `完成！`, `全部完成`, `終了`, `완료`
    r"^\W*(?:全部|已|已经)?(?:完成|完毕|完畢|结束|結束|終了|完了|완료|종료)\W*$|"
    # the final metrics: `Final metrics:`, `Final PPO metrics:`, DL4J's evaluation banner;
    # the final model's output: `Final generated text:`, `Final samples`
    # (in capitals too: `FINAL RESULTS:`)
    r"\b(?:[Ff]inal|FINAL)(?: [A-Za-z]\w*)?[ _-]?(?:[Aa]cc(?:uracy)?|[Ll]oss|[Ee]rror|[Ss]core|"
    r"[Mm]etrics?|[Rr]esults?|[Pp]erplexity|[Pp]erformance|[Ee]valuation|[Tt]ext|[Ss]amples?|"
    r"[Oo]utputs?|[Gg]enerations?|ACC(?:URACY)?|LOSS|ERROR|SCORES?|METRICS?|RESULTS?|"
    r"PERPLEXITY|PERFORMANCE|EVALUATION)\b|"
    # (from the start of a run of `=` only: tried inside one, a line of 64 Ki `=` was
    # quadratic, a minute)
    r"(?<!=)={3,}\s*Evaluation Metrics\s*={3,}|"
    # a search's headline over its best, alone on its line (Optuna's `Best trial:`, a
    # tracker tuner's `🏆 BEST RESULT`, `Best hyperparameters:`, `Top 5 trials:`): it
    # exists once the trials are done
    r"^\W*(?i:best\s+(?:results?|trials?|hyper-?parameters|params|config(?:uration)?s?)|"
    r"top\s+\d+\s+(?:trials|configs|configurations|runs))\W*$|"
    # (or the best result headed so, its figures after it on the line, once, after the
    # last epoch: a slot-filling BLSTM's `BEST RESULT: \tEpoch : 21\tbest valid (…)`; a
    # run that prints it at each epoch prints it between its records: it recurs)
    r"^\W*(?i:best\s+results?)\s*:|"
    # a banner over the run's best, its figures after it (DeepDTAGen's `=== BEST
    # [cnn_davis_regB] === epoch 75 | MSE 0.2346 | CI 0.8921`)
    r"^\W{0,3}(?:={3,}|\*{3,}|#{3,})\s*(?:BEST|[Bb]est)\b[^=*#\n]{0,80}(?:={3,}|\*{3,}|#{3,})|"
    # the whole run's time, last on its line (`params 800,417 | mean 3.4s/epoch | total
    # 5.7 min`): a run that prints a running total at each epoch prints it between its
    # records too (then it recurs)
    r"\b(?:[Tt]otal|TOTAL)(?:\s+(?:time|TIME|training time))?(?:\s*[:=]\s*|\s+)\d+(?:\.\d+)?\s*"
    r"(?:s|sec|secs|seconds|min|mins|minutes|h|hrs|hours)\s*$|"
    # the results' heading alone on its line, in a banner or not (a BirdCLEF script's
    # `RESULTS` between rules, then each fold's best and `Time: 5.1 min`): printed once
    # the work is done (a heading the run prints at each epoch recurs)
    r"^\W*(?:RESULTS?|SUMMARY|[Rr]esults?|[Ss]ummary)\W*$|"
    # the run's statistics, headed as the whole run's (TF Model Garden's classifier
    # trainer: `Run stats:`, then a dict of its final accuracy and losses)
    r"\b(?:[Rr]un|[Tt]raining|[Jj]ob)\s+(?:[Ss]tat(?:s|istics))\s*:?\s*$|"
    # an aggregate over the folds, subjects or seeds of an experiment, named as one: a
    # cross-validation's banner alone on its line (`CV`, `Cross-validation results`,
    # after each fold's `Fold: 3 result`), an average over all of them (`Average all
    # subjects - best run:`, `mean over all folds`): it exists once they are all done
    r"^\W*(?:CV|[Cc]ross[- ]?[Vv]alidation)(?:\s+(?:[Ss]cores?|[Rr]esults?|[Ss]ummary))?\W*$|"
    r"\b(?:[Aa]verag(?:e|ed)|[Mm]ean|[Oo]verall)\b(?:\s+(?:over|of|across|for))?\s+all\s+"
    r"(?:the\s+)?(?:folds|subjects|runs|seeds|splits|trials|repeats|repetitions|tasks|"
    r"datasets|experiments)\b|"
    # (or over their count: DyGLib's `metrics over 1 runs:` before each test figure's mean
    # and spread, `results across 5 seeds`)
    r"\b(?:[Aa]verag(?:e|ed)|[Mm]ean|[Oo]verall|[Mm]etrics|[Rr]esults?|[Ss]cores?)\s+"
    r"(?:over|across)\s+\d+\s+(?:folds|subjects|runs|seeds|splits|trials|repeats|"
    r"repetitions)\b|"
    # the results written out to a file, the script's last act (`[OK] Results appended
    # to: scripts/results/models_test_lead1_K6.csv`, `Results saved to results.json`; not
    # a folder, YOLOv5's `Results saved to runs/train/exp` whatever the run did)
    r"\b(?:[Rr]esults?|RESULTS?|[Mm]etrics|[Ss]cores)\s+(?:(?:were|was|have been|has been)\s+)?"
    r"(?:saved|written|appended|stored|exported|dumped)\s+(?:to|in|into|at)\b:?\s*\S*"
    r"\.(?:csv|json|jsonl|txt|tsv|pkl|npy|npz|yaml|yml|xlsx)\b|"
    # `Final avg. r2: 0.77`, `Final MAE = 4.3`, `Final Dice 0.950`: a final figure,
    # whatever its name
    r"^\W*(?:[Ff]inal|FINAL)\b(?:[^:=]{0,40}[:=]\s*|\s+[A-Za-z][\w.@-]*(?:\s+[A-Za-z][\w.@-]*)?"
    r"\s+)-?\.?\d|"
    # a summary: xgboost / lightgbm `best_iteration`, VW `average loss = …`
    r"\b[Bb]est[_ ]iteration\b|\b[Bb]est iteration is\b|^\s*average loss\s*=|"
    # the job's driver tears down the cluster it trained on, once its workers are done
    # (TensorFlowOnSpark's `INFO (MainThread-456416) Shutting down cluster`, Spark's
    # `Stopping SparkContext`, `Shutting down Ray`): what the driver does last
    r"\b(?:[Ss]hutting down|[Ss]hut down|[Ss]topping|[Ss]topped|[Cc]losing|[Cc]losed)\s+"
    r"(?:the\s+)?(?:\w+\s+)?(?:cluster|[Ss]park ?[Cc]ontext|[Ss]park ?[Ss]ession|Ray)\b|"
    # ... or the machine it ran on, once its work is done (a Kaggle solution's script
    # ends with `gcloud compute instances stop`: `Stopping instance(s) instance-1...`)
    r"^\s*(?:Stopping|Deleting|Suspending) instance\(s\) \S+")
# The log's last line ends on the word, whatever the script's own name for its work
# (`Model comparison complete!`, `train AlexNet done`, `Ablation study completed!`, in a
# banner too): not
# what a run does along the way (`Saving checkpoint... done`, `Loading data done`). Only
# the last line: a model's samples printed after training are prose (`I he do done.`).
_ENDS_ON_THE_WORD = lazy_re.compile(
    r"^(?!.*\b(?:[Ss]av|[Ll]oad|[Dd]ownload|[Pp]repar|[Pp]re-?process|[Rr]ead|[Ww]rit|"
    r"[Bb]uild|[Ii]nit|[Ss]et(?:ting)?[ -]?up|[Cc]ompil|[Cc]opy|[Cc]opi|[Ee]xtract|[Ff]etch|"
    r"[Ee]poch|[Bb]atch|[Ss]tep|[Ii]ter|[Ff]old|[Rr]ound|[Ww]arm))"
    # (the first letter found at once, not by backtracking: a 64 KB line of `a.a.a.` took
    # a minute with `.*[A-Za-z].*`)
    r"[^A-Za-z]*[A-Za-z].*\b(?:[Cc]omplete[d]?|[Ff]inished|FINISHED|COMPLETE[D]?|[Dd]one|DONE)"
    # (a banner's frame after it, and the label of what was done: a five-seed suite's
    # `=== suite complete: macro16 ===`)
    r"[.!]*(?::\s*[\w.@/-]{1,40})?\s*(?:[=*#~_-]{2,})?\s*$")
# The value a notebook (or a REPL) displays when a cell ends: the training cell's last
# expression (`tensor(0.0126, device='cuda:0', grad_fn=<…>)`, Keras `model.evaluate`'s
# list of scores `[1.4607702493667603, 0.5026000142097473]`), or the next cell's plot
# (`[<matplotlib.lines.Line2D at 0x7f…>]`, `<Figure size 432x288 with 1 Axes>`). A loop
# in a cell that stopped any other way shows a traceback (KeyboardInterrupt too). The cell
# returned: the training in it is over wherever it stood (a silent early stop, a `fit`
# cut short), so well short of the plan it is an end (ENDED), not a live run's words.
_DISPLAYED = lazy_re.compile(
    r"^tensor\(.*\)$|^\[-?\d+\.\d+(?:[eE]-?\d+)?(?:,\s*-?\d+\.\d+(?:[eE]-?\d+)?)*\]$|"
    # (any object's repr: matplotlib's artists, Keras's `fit` return, `<keras.callbacks.
    # History at 0x195dc5f60>`, `<keras.src.callbacks.history.History object at 0x…>`)
    r"^\[?<[A-Za-z_][\w.]* (?:object )?at 0x[0-9a-fA-F]+>\]?$|"
    # (an estimator's repr, what a scikit-learn-style `fit` returns: XGBoost's
    # `XGBClassifier(objective='multi:softprob')`, `LGBMRegressor(colsample_bytree=0.97,`)
    r"^[A-Z][A-Za-z0-9]*(?:Classifier|Regressor|Ranker)\((?:[A-Za-z_]\w*=.*)?$|"
    r"^<Figure size \d+(?:\.\d+)?x\d+(?:\.\d+)? with \d+ Axes>$")
# The run's best epoch, named once the loop is over (NICE-EEG's `The best epoch is: 54`
# after `Epoch 199: … loss val: 5.5359`, E2DTC's `Best Epoch 6\tAcc: 0.8913` after its
# last epoch, 11): a run that names its best so far at every epoch prints it between its
# records too (then it recurs), and `New best …` is one epoch's news.
# The same of a search's best trial (FLAML's trial log closes on `{"curr_best_record_id":
# 10}`), under a JSON key too.
# (ReChorus's `Best Iter(dev)=   21\t dev=(HR@5:0.9142,NDCG@5:0.7762)` after its early
# stop: the iteration, the split it was chosen on in brackets; a CutPaste results file's
# `best_epoch5300 best_ave_auroc 0.94104`, the number glued to its word)
_BEST_EPOCH = lazy_re.compile(r"(?<![Nn]ew )(?<!NEW )(?<![A-Za-z])(?:[Bb]est|BEST)[ _-]?"
                              r"(?:[Ee]poch|EPOCH|[Rr]ecord|[Tt]rial|[Ii]ter(?:ation)?|ITER)"
                              r"(?:[ _-]?(?:id|ID|no))?(?:\b|(?=\d))(?:\s*\(\w{1,12}\))?"
                              r"\"?(?:\s+(?:is|was))?\s*[:=]?\s*\d")


# The best value of a measure, named once the loop is over (a hand-written PyTorch loop's
# `best val timing-F1 (@thr 0.5): 0.635` after its last `epoch  30  train_loss …` line,
# then its threshold sweep's `best timing F1=0.689 @ thr=0.70 (count MAE=1.778 …)`): the
# line opens on `best`, a summary of the epochs trained. A run that names its best so far
# after every epoch prints it between its records too (then it recurs).
# (after the run's own tag in brackets too: an optimizer comparison's `[AdamW] Best Val
# Acc: 0.8268` after its tenth epoch)
# (after a short sentence of the stop too: `Stopping. Best val: 9.9 at epoch 3`)
# (or its highest, or lowest: an implicit image fit's `Max PSNR: 43.8565` between rules
# after its last epoch)
_BEST_VALUE = lazy_re.compile(r"^\W*(?:\[[\w .-]{1,30}\]\s*)?"
                              r"(?:[A-Z][a-z]+(?: [a-z]+){0,3}[.!]\s+)?"
                              r"(?:[Bb]est|BEST|[Mm]ax(?:imum)?|MAX|[Hh]ighest|[Ll]owest)\b"
                              r"[^:=]{1,50}[:=]\s*[-+]?\.?\d")


def names_best_value(line: str) -> bool:
    """Whether a line opens by naming a best value (`best val F1: 0.63`): a summary of
    the epochs trained, not a training record, though it carries metrics."""
    # (behind a logger's head too: `2024-04-27 20:43:41,230 - Model - INFO - Best
    # accuracy is: 0.91321`)
    return ("est" in line or "EST" in line or "ax" in line or "AX" in line) and (
        _BEST_VALUE.search(line) is not None or _BEST_VALUE.search(message(line)) is not None)


def names_best_epoch(line: str) -> bool:
    """Whether a line names the run's best epoch (`Best Epoch 6  Acc: 0.89`): a summary
    of the epochs trained, not a record of that epoch, though it reads like one."""
    return ("est" in line or "EST" in line) and _BEST_EPOCH.search(line) is not None


# Words of a final evaluation or of the time the run took, which a run may also print
# after its first epoch: `Test accuracy: 0.91`, `test loss 0.31`, `Accuracy of the network
# on the 10000 test images: 54 %`, `Total time: 0:13:00`, Ray Tune's `Total run time:
# 73.40 seconds`, `It took 12.3 seconds`, `ran for 330.08m`, `Time ran: 1877.5` (a numpy
# MNIST script's Markdown report, sealed-8). A live run that prints one
# line an epoch goes quiet after its first one; so these close a run only after a few
# training records (see `ClosingBlock.judge`).
# A cross-validation's figure over all its folds, once they are done (`cv_score_fold_mean:
# 0.7807`, `The averaged accuracy of 5 folds is 0.957`, `OOF AUC mean: 0.94`; a fold's own
# score, printed after each fold, recurs and is none).
_FOLDS_SUMMED = lazy_re.compile(
    r"(?i:\b(?:cv|oof|cross[ _-]?val(?:idation)?)[\w ]{0,24}?(?:mean|avg|average|overall)"
    r"\b\s*[:=]\s*-?\d|\b(?:averaged?|mean)\b[\w ]{0,30}?\b(?:of|over|across)\s+(?:all\s+)?"
    r"\d+\s+folds\b)")


def sums_up_folds(line: str) -> bool:
    """Whether a line gives a cross-validation's figure over all its folds, or any figure
    with its spread over repetitions (`Acc: 0.779 ± 0.065` under `=== Cross-Validation
    Results ===`): a summary of the trainings done, not a training record, though it
    carries a figure."""
    if ("±" in line or "+/-" in line or "+-" in line) and _SPREAD.search(line) is not None:
        return True
    low = line.lower()
    return ("cv" in low or "oof" in low or "fold" in low or "cross" in low) \
        and _FOLDS_SUMMED.search(line) is not None


_SPREAD = lazy_re.compile(r"\d\s*(?:±|\+/-|\+-)\s*\.?\d")


_LATE_WORDS = lazy_re.compile(
    r"\b(?:[Tt]est(?:ing)?|TEST|[Hh]eld-?out)(?:[ _-]|:\s*)?(?:set[ _-]?)?"
    r"(?:[Aa]cc(?:uracy)?|[Ll]oss|[Ee]rror|[Ss]core|[Ff]1|AUC|auc|[Mm]etrics?|[Rr]esults?|"
    r"[Pp]erplexity|ppl|[Pp]erformance|[Ee]valuation)\b|"
    r"\bon the \d+ test\b|"
    rf"{_BEST_EPOCH.pattern}|{_BEST_VALUE.pattern}|"
    # the heading of the best results, their figures under it (R2Gen's `Best results (w.r.t
    # BLEU_4) in validation set:` after its last epoch's summary)
    r"^\W{0,4}(?:[Bb]est|BEST)\s+(?:[Rr]esults?|RESULTS?|[Mm]etrics?|[Pp]erformance|"
    r"[Ss]cores?)\b[^:=]{0,60}:\s*$|"
    r"\b(?:[Tt]otal|[Tt]raining|[Tt]rain|[Ee]lapsed|[Ww]all|[Aa]vg\.?|[Aa]verage|[Mm]ean)"
    r"[ _-]?(?:training[ _-]?|epoch[ _-]?|step[ _-]?|iter(?:ation)?[ _-]?|run[ _-]?|"
    r"execution[ _-]?|script[ _-]?|program[ _-]?|job[ _-]?)?(?:time|Time|TIME)\b"
    # the units said in words between (`Total script time in hours minutes seconds:
    # 00:27:44`, a meta-learning run's last line), or a verb (a DeepONet script's `Total
    # time is : 1177.9 Total epoch is  1000`)
    r"(?:\s+in(?:\s+[a-z]+){1,3}|\s+(?:is|was))?"
    # (its units in brackets: `Training Time (in minutes) = 6.45`, a course's MLP)
    r"(?:\s*(?:\(\w+(?: \w+){0,2}\))?\s*[:=]?\s*)\d|"
    # the time named first and its verb after (`### Time ran: 1877.5`, `Time taken: 12.3`,
    # `Time elapsed = 0:13:00`), or the run's own time alone (`Running time: 812 s`,
    # `Execution time: 3.2h`)
    r"\b(?:[Tt]ime|TIME)\s+(?:ran|taken|elapsed|spent|used)\s*[:=]\s*\d|"
    # ... and what it was spent on after the verb (GPUMD's `Time used for training =
    # 10527.046875 s.`)
    r"\b(?:[Tt]ime|TIME)\s+(?:taken|spent|used)\s+(?:for|on|in)\s+(?:the\s+)?(?:whole\s+)?"
    r"(?:training|train|run|fitting|experiment)\s*[:=]\s*\d|"
    # or what it was the time of said after it (`Time for training:  54.61 s`, a NumPy
    # CNN's last line; `time of the whole training = 3h`)
    r"\b(?:[Tt]ime|TIME)\s+(?:for|of)\s+(?:the\s+)?(?:whole\s+|entire\s+|full\s+)?"
    r"(?:training|train|run|fitting|experiment)\s*[:=]\s*\d|"
    r"(?:^|[^\w ]\s*)(?:[Rr]un(?:ning)?|[Ee]xecution)[ _-]?time\s*[:=]\s*\d|"
    r"\b[Ii]t took\b|\b[Tt]ook\s+[\d.:]+\s*(?:s|sec|secs|seconds|m|min|mins|minutes|h|hours)\b|"
    # the whole of it done, and in how long, a script's last line (`Completed in 253.5
    # seconds`, after five Keras emulators trained in turn)
    r"^\W*(?:[Cc]ompleted|[Ff]inished|[Dd]one|COMPLETED|FINISHED|DONE)\s+in\s+[\d.:]+\s*"
    r"(?:s|sec|secs|seconds|m|min|mins|minutes|h|hrs|hours)\b|"
    r"\bran for\s+[\d.]+\s*(?:s|m|h|sec|min|seconds|minutes|hours)\b|"
    # the whole training's record written out, which a script does once it is over (a
    # Julia Q-learning run's last line, `Saved training metrics to training_data.csv`,
    # after `Saved Q-table to model_checkpoint.bson`; `Training history saved to …`)
    r"\b(?:[Ss]aved|[Ww]rote|[Ww]ritten)\b.{0,30}\b[Tt]rain(?:ing)?[ _-]"
    r"(?:metrics|history|log|curves?|results|stats|statistics|data)\b|"
    # a cross-validation's figure over all its folds (see `_FOLDS_SUMMED`)
    rf"{_FOLDS_SUMMED.pattern}|"
    # a competition's submission written out, a pipeline's last step (`DONE -
    # submission_v7.csv written`, `Saved submission to submission.csv`)
    r"\bsubmission[\w.-]*\s+(?:file\s+)?(?:(?:was|has been)\s+)?(?:written|saved|created)\b|"
    r"\b(?:[Ss]aved|[Ww]rote|[Ww]ritten|[Ww]riting|[Ss]aving)\s+(?:the\s+)?submission\b|"
    # the results written out to a file: `Results saved to predictions.txt`, `wrote:
    # results/train.log, metrics.csv`, `saving result.json and vae_result.json at
    # output/` (a per-epoch save recurs between records, and then it is no end; a bare
    # folder is not taken: YOLOv5 says `Results saved to runs/train/exp` after its final
    # validation's per-class table, whose rows read as records)
    r"\b(?:[Rr]esults?|RESULTS?)\s+(?:(?:was|were|has been|have been)\s+)?"
    r"(?:saved|written|stored)\s+(?:to|in|at|as|into)\s+\S*\.[A-Za-z]\w{0,5}\b|"
    r"\b(?:[Ss]av(?:ed|ing)|[Ww]r(?:ote|iting)|[Ww]ritten)\b:?\s+(?:the\s+)?(?:final\s+)?"
    r"(?:[\w./-]*/)?[Rr]esults?\b|"
    # an aggregate over the runs, folds or seeds of the experiment, which only exists
    # once they are all done: `acc 81.2 ± 0.5`, `F1 = 0.63 +/- 0.02` (a `mean` or a `std`
    # alone is no such thing: rsl_rl's `Mean reward:` and `Mean action std:` come with
    # every iteration)
    rf"{_SPREAD.pattern}|"
    # or its spread said on a line of its own, after the mean (a k-fold run's `Average
    # accuracy:  0.676` then `std:  0.041`)
    r"^\W*(?:std|stdev|std\.? ?dev\.?|[Ss]tandard deviation)\s*[:=]\s*\.?\d|"
    r"\b(?:[Tt]rain(?:ing)?[ _-](?:metrics|history|log|curves?|results|stats|statistics|data)|"
    r"[Hh]istory|[Mm]etrics)\s+"
    r"(?:(?:was|were|has been|have been)\s+)?(?:saved|written)\s+(?:to|in|at|as)\b|"
    # or drawn: the curves plotted once the loop is over (a hand-written PPO's last line,
    # `Plot saved as rewards.png`, sealed-15; `Saved plot to loss.png`, `Figure saved to …`)
    r"\b(?:[Pp]lots?|[Ff]igures?|[Cc]harts?|[Gg]raphs?)\s+"
    r"(?:(?:was|were|has been|have been)\s+)?(?:saved|written)\s+(?:to|in|at|as)\b|"
    r"\b(?:[Ss]aved|[Ww]rote)\s+(?:the\s+)?(?:\w+\s+)?(?:plots?|figures?|charts?|graphs?)\s+"
    r"(?:to|in|at|as)\b")
# The trained model written out whole, to a file named by no count of the run (`Saved
# model to data/big.mytorch`, `Model saved at pretrained/lgbm_model_sa_zho.txt`): a
# script's last act, where a checkpoint's path names its step or epoch (`model_epoch3.pt`,
# `checkpoint-500`) and a per-epoch save recurs between records.
#
# A hand-written network in C or Fortran has no "model": it writes its weight matrices
# and then the network, each to a file of its own, and says each went well
# (`Successfully saved matrix to hidden`, `Successfully saved matrix to output`,
# `Successfully written to 'testing_net'`: a from-scratch C/CUDA MNIST network under
# Slurm, sealed-7 and sealed-14). `Successfully` with a save and no object is the same act.
_MODEL_SAVED = lazy_re.compile(
    r"\b(?:(?:[Ss]aved|[Ss]aving|[Ww]rote|[Ww]riting)\s+(?:the\s+)?(?:final\s+|trained\s+)?"
    r"(?:[Mm]odel|[Ww]eights|[Nn]etwork|[Pp]arameters|[Mm]atri(?:x|ces))|"
    r"(?:[Mm]odel|[Ww]eights|[Nn]etwork|[Pp]arameters)\s+(?:(?:was|were|has been|"
    r"have been)\s+)?saved|[Ss]uccessfully\s+(?:saved|written|wrote))"
    r"\s+(?:to|at|in|as|into)\b:?\s*(?P<path>\S+)")
_EXTENSION = lazy_re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,11}$")


def _model_saved(line: str) -> bool:
    found = _MODEL_SAVED.search(line) if "av" in line or "rit" in line else None
    if found is None or line[found.end():].strip():
        return False
    path = _EXTENSION.sub("", found.group("path").strip("'\"`").rstrip("./\\"))
    return not any(ch.isdecimal() for ch in path)


# Training records before a late word closes the run: past a first epoch and its test.
_RECORDS_BEFORE_LATE = 3
# A cheap test first, on the line in lower case (substring tests: a regular expression
# here costs more than the rest of a line's parse): most lines have none of these.
_HINTS = ("done", "finish", "complete", "end", "over", "success", "训练", "学習", "학습",
          "훈련", "完成", "完毕", "完畢", "结束", "結束", "終了", "完了", "완료", "종료",
          "abgeschlossen", "beendet", "termin", "finaliz", "conclu", "заверш", "test",
          "final", "held", "evaluation metrics", "best", "average loss", "total",
          "training time", "train time", "cluster", "sparkcontext", "sparksession",
          "spark context", "spark session", "down ray", "instance(s)", "saved", "wrote",
          "written",
          "training_time", "train_time", "epoch time",
          "epoch_time", "step time", "iteration time", "elapsed", "wall", "took", "ran for",
          "time ran", "time taken", "time spent", "time used", "run time", "running time",
          "time for", "time of", "stats", "statistics",
          "execution time", "run_time", "running_time", "execution_time",
          "tensor(", "<matplotlib", "<figure size", " at 0x", "]", "saving", "writing",
          "classifier(", "regressor(", "ranker(",
          "stored", "result", "summary",
          "±", "+/-", "+-", "std", "standard deviation", "cv", "validation", " all ",
          "max", "highest", "lowest")
# Words that say the block is no end: a part-way counter (`epoch 3/10 done`), a stage
# of a larger run (`Training done for stage 1`).
_PART_WAY = lazy_re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")
_STAGE = lazy_re.compile(r"\b(?:[Ss]tage|[Pp]hase)\s*[:#]?\s*\d")


def may_close(line: str) -> bool:
    """Whether a line has a word that may close a run (a cheap test: most lines do not)."""
    low = line.lower()
    return any(hint in low for hint in _HINTS)


def closes(line: str) -> bool:
    """Whether a line, late in a run, has a closing word and no part-way counter."""
    return may_close(line) and _closes(line)


def _closes(line: str, late: bool = True) -> bool:
    """Whether a line has a closing word (`late`: or a late one) and no part-way counter,
    as printed or without a logger's head (DiT's `[2024-10-05 17:56:05] Done!` is `Done!`
    alone on its line)."""
    if _closes_as_printed(line, late):
        return True
    bare = message(line)
    return bare != line and _CLOSING_WORDS.search(bare) is not None and _no_part_way(bare)


def _closes_as_printed(line: str, late: bool) -> bool:
    if _CLOSING_WORDS.search(line) is None and _DISPLAYED.search(line) is None \
            and not (late and (_LATE_WORDS.search(line) or _model_saved(line))) \
            and not says_finished(line):
        return False
    return _no_part_way(line)


def says_over(line: str) -> bool:
    """Whether a closing line says the run is over in words that close it whenever they
    come (`Final validation Mean Intersection Over Union: 47.78%`, `Training finished`),
    not only in a late word a run may print along the way (`Test accuracy: 0.91`)."""
    return _CLOSING_WORDS.search(line) is not None \
        or _CLOSING_WORDS.search(message(line)) is not None


def _no_part_way(line: str) -> bool:
    """Whether no counter in the line stands short of its total (`epoch 3/10 done`: a
    stage of the run, not its end)."""
    return all(int(m.group(1)) >= int(m.group(2)) for m in _PART_WAY.finditer(line))


class ClosingBlock:
    """The lines after the last training record (the parser adds them as it reads) and
    the judgement of them, once per read."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._judged = 0  # lines of the block already judged
        self._said = False  # the block was judged a closing one
        self._recurring: set[str] = set()  # closing-looking templates seen mid-run
        self._records = 0  # training records read (up to a few)
        self._launches = LaunchEnds()  # closing lines that ended a launch
        self._last = ""  # the block's last line that is not blank
        self._shown = 0  # lines of the block that show an object's value (`tensor(…)`)
        self._times: dict[str, int] = {}  # each kept line (stripped): how often it came
        self._job_report = False  # a scheduler's report on the job began (`is_job_report`)

    def add(self, line: str) -> None:
        """A line after the last training record; only those that may close a run are
        kept (the others cannot change the judgement)."""
        if line.strip():
            self._last = line
        if "tensor(" in line or " at 0x" in line:
            self._shown += 1
        if self._job_report or is_job_report(line):
            # The scheduler's report on the job (PBS's `PBS Job 3523461.pbs`, then `CPU
            # time`, `Wall time`, `Mem usage`): printed however the job ended, no word of
            # the run's own on how it went.
            self._job_report = True
            return
        if len(self._lines) < _KEPT and may_close(line):
            # (a line said again is counted, not kept again: an evaluation's warning on
            # every batch, `The following generation flags are not valid … ['top_k']`,
            # would fill the block before the test's figures that close the run)
            said = line.strip()
            if said not in self._times:
                self._lines.append(line)
            self._times[said] = self._times.get(said, 0) + 1

    def trained(self, relaunched: bool = False) -> None:
        """Training moved on: the lines since the last record were not the end. Their
        closing-looking lines are the run's recurring ones (a per-epoch test pass),
        unless the run's start-up came again after them (see `launch_ends`) or its
        steps went back (`relaunched`): then they ended a launch."""
        closings = [template(line.strip()) for line in self._lines if _closes(line)]
        if not self._launches.trained(closings) and not relaunched \
                and len(self._recurring) < _MAX_RECURRING:
            self._recurring.update(closings)
        self._lines.clear()
        self._times.clear()
        self._job_report = False
        self._last = ""
        self._shown = 0
        self._judged = 0
        self._said = False
        if self._records < _RECORDS_BEFORE_LATE:
            self._records += 1

    def start_up_again(self, shape: str) -> None:
        """A line of the run's start-up (`shape`, see `launches`) printed again, after
        training began (before it, the launches' own: see `launches`). Only a closing
        line other than this one can have come before it: an excerpt that begins on an
        epoch's evaluation takes that line for its start-up (MS-G3D's `Mean test loss of
        155 batches: 3.17` at the top, then at every epoch), and a line does not end a
        launch by beginning the next."""
        if self._records:
            self._launches.start_up_again(shape, any(
                _closes(line) for line in self._lines if start_up_shape(line) != shape))

    def recurs(self, shape: str) -> bool:
        """Whether the run printed a closing-looking line of this template between its
        training records before (a per-epoch `Training done`), not as a launch's end."""
        return shape in self._recurring or self._launches.recurs(shape)

    def pending(self, late: bool = False) -> bool:
        """Whether the block holds a closing line the run did not print between its
        records, not yet judged: a record after it may be the run's final figures. Only
        the words that close a run whenever they come (`Final results:`, `Training
        finished`), unless `late` (the block is asked about a launch's end): a late
        word's line (`Test Error:`) may be the first epoch's test, its figures after it."""
        return any(_closes(line, late) and (late or _CLOSING_WORDS.search(line) is not None)
                   and not _STAGE.search(line) and not self.recurs(template(line.strip()))
                   for line in self._lines)

    def judge(self) -> LogEvent | None:
        """At the end of a read: a COMPLETED event (detail `CLOSING`) the first time the
        block since the last training record holds a closing line the run did not print
        between its records."""
        if self._said:
            return None
        new, self._judged = self._lines[self._judged:], len(self._lines)
        late = self._records >= _RECORDS_BEFORE_LATE
        for line in new:
            if _closes(line, late) and not _STAGE.search(line) \
                    and not self.recurs(template(line.strip())):
                displayed = _DISPLAYED.search(line.strip()) is not None
                if displayed and (self._shown > 1 or self._times.get(line.strip(), 0) > 1):
                    # Values printed over and over (a loop's debug `print(tensor)`; a
                    # search's dump of its architecture weights after each epoch, dozens of
                    # `tensor([0.3332, 0.3333, 0.3334], device='cuda:0', …)`), not the one
                    # value a notebook displays when its cell returns.
                    continue
                self._said = True
                detail = CELL_ENDED if displayed else CLOSING
                return LogEvent(EventKind.COMPLETED, line.strip()[:500], detail)
        last = self._last.strip()
        if last and _ENDS_ON_THE_WORD.search(last) and not _STAGE.search(last) \
                and _no_part_way(last) and not self.recurs(template(last)):
            self._said = True
            return LogEvent(EventKind.COMPLETED, last[:500], CLOSING)
        return None
