"""A block of settings printed under its heading: the run's configuration, not records.

A script that prints its configuration often heads it with a word for what follows and
indents one setting a line below it (GST-Tacotron's `[2021-04-14 10:24:36.900]
Hyperparameters:`, then `  initial_learning_rate: 0.002`, `  power: 1.5`, `  max_iters:
1000`; `Arguments:`, `Config:`, `Training settings:` alike; FuxiCTR's `Params: {` and a
JSON object, one field a line, `"monitor": "{'AUC': 1, 'logloss': -1}",`). Read one line
at a time, those lines are `name: value` pairs like any record's: a learning rate or a
`power` among them was counted as a training record (a run that never trained, three
launches each stopping after its configuration, read as one with six records), and a
monitor's weight `'AUC': 1` as the run's first evaluation (which hid an AUC at 0.5 on
every real one). Inside the block a line is a setting: the plan is still read from it
(`max_iters: 1000`), no record is.

The block is the heading's indented lines (and YAML's `- item` lines), and its lines of
one setting each (`ALPHA_LR=0.0003` behind pt.darts's logger head, under `Parameters:`);
the first line that is none of these, or a blank one, ends it. A Markdown heading needs
no colon (a script writing its log as Markdown: `#### Configurations`, then `- learning
rate: 0.0001` items).

A heading with its settings on the same line, as a dict (DLRM's `command line args:
{"arch_sparse_feature_size": 128, …, "loss_threshold": 0.0}`), is one setting: its
`loss_threshold: 0.0`, once per rank, was read as a loss exactly 0 on three steps.

A PyTorch optimizer printed whole is such a block too: `SGD (`, then `Parameter Group 0`
and its settings indented below (`    lr: 0.1`, `    momentum: 0.9`), then `)`. NoiLIn's
`SparseSGD (` block gave its group number and `dampening: 0` as steps 1 and 2, and every
epoch after it kept step 2, so a 200-epoch run read as two records.

A YAML configuration logged whole is such a block too, headed by each top-level key
alone on its line (`optimizer:`, then `  lr: 0.05` and `  lambda_lr: 1e-2`: torchpack's
dump read its rates as a run's first two records, and every later epoch kept step 2).

A Python configuration module copied into the log is settings line by line: an upper-case
name assigned under its object (C^3 Framework's `__C.LR_DECAY = 0.995 # decay rate`,
`cfg.TRAIN.BATCH_SIZE = 16`) or with a comment after it. Its rates and decays were read
as a run's records, each a step.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.log_prefix import message

# The heading alone on its line, a few words at most before the word for settings.
_HEADING = lazy_re.compile(
    # (a few words after it too: AutoGluon's `User-specified model hyperparameters to be fit:`)
    r"^\W{0,3}(?:[A-Za-z][\w.-]*\s+){0,2}(?i:hyper-?param(?:eter)?s|h?params|parameters|"
    # (or a remark in brackets after those: AutoGluon's `Model configs that will be trained
    # (in order):`, then one model's settings a line)
    r"arguments|args|config(?:uration)?s?|settings|options|opts|flags)(?:\s+[a-z]+){0,4}"
    r"(?:\s*\([a-z ]{1,30}\))?\s*[:=]\s*[{(\[]?\s*$|"
    # a Markdown heading, which takes no colon (`#### Configurations`, then `- …` items)
    r"^#{1,6}\s+(?:[A-Za-z][\w.-]*\s+){0,2}(?i:hyper-?param(?:eter)?s|parameters|arguments|"
    r"config(?:uration)?s?|settings|options)\s*$")
# The heading and its settings on one line, as a dict or a list (DLRM's `command line
# args:  {"arch_sparse_feature_size": 128, …, "loss_threshold": 0.0, …}`): one setting.
_INLINE = lazy_re.compile(
    r"^\W{0,3}(?:[A-Za-z][\w.-]*\s+){0,3}(?i:hyper-?param(?:eter)?s|h?params|parameters|"
    r"arguments|args|config(?:uration)?s?|settings|options|opts|flags)\s*[:=]\s*"
    r"(?:\{.*\}|\[.*\]|\(.*\))\s*$")
# A part of the training's machinery named, then its settings on the same line (a
# DocRED script's `Optimizer: PLM params=391 (lr=2e-05), other params=167 (lr=0.001)`
# and `Scheduler: total_steps=2880, warmup_steps=172` at each launch): how the run was
# set up, no record of its training (twenty launches that never trained read as twenty
# records, so no launch was seen to die before its first step).
# (behind a logger's name the head leaves: `docred.train | Optimizer: …`)
_PART_SET_UP = lazy_re.compile(r"^\W{0,3}(?:[\w.-]+\s*\|\s*)?(?i:optimi[sz]er|"
                               r"(?:lr[ _-]?)?scheduler|sampler|data[ _-]?loader)s?\s*:\s+"
                               r"(?:[A-Za-z]\w*\s+){0,3}[A-Za-z_][\w.]*\s*=")
_PART_HINTS = ("ptimi", "PTIMI", "cheduler", "CHEDULER", "ampler", "AMPLER", "oader", "OADER")
# One setting alone on its line under a heading: a name, `=` or `:`, one value.
_BRACKETS = frozenset({"{", "}", "[", "]", "},", "],"})
_DICT_ENTRY = lazy_re.compile(r"""^\s*['"][\w .-]{1,40}['"]\s*:""")
_ONE_SETTING = lazy_re.compile(r"^[A-Za-z_][\w.-]*\s*[=:]\s*[^\s=:,;|][^\s=,;|]*\s*$")
# ... or a name and its value in brackets (AutoGluon's `Model configs that will be trained
# (in order):`, then `KNeighborsUnif_BAG_L1: \t{'weights': 'uniform', …}` a model a line
# behind Ray's head, which takes the indent away).
_NAMED_BRACKETS = lazy_re.compile(r"^[A-Za-z_][\w.-]{0,80}\s*[=:]\s*[{\[(]")
# An optimizer's repr: its class name and an open bracket alone on the line.
_OPTIMIZER = lazy_re.compile(r"^[A-Z][A-Za-z0-9_.]* \($")
_GROUP = lazy_re.compile(r"^Parameter Group \d+\s*$")
# An upper-case setting assigned, under an object's name or with a comment after it.
_ASSIGNED = lazy_re.compile(r"^\s*(?:(?:[A-Za-z_]\w*\.)+[A-Z][A-Z0-9_]+\s*=\s*[^=\s][^=]*|"
                            r"[A-Z][A-Z0-9_]+\s*=\s*[^=\s#][^=#]*#[^=]*)$")
# A banner heading a section (MACE's `===========OPTIMIZER INFORMATION===========`, then
# `Learning rate: 0.01, weight decay: 5e-07` and `Number of gradient updates: 1800` behind
# its logger's head, up to a blank line and the `===========TRAINING===========` banner):
# a section whose words name settings holds settings, however its lines look. Five
# launches of a run that hung before its first epoch read as fifteen training records.
_BANNER = lazy_re.compile(r"^[=*#-]{3,}\s*([A-Za-z][A-Za-z ]{0,40}?)\s*[=*#-]{3,}$")
_SECTION_WORDS = lazy_re.compile(r"(?i)\b(?:optimi[sz]er|model|settings?|config(?:uration)?s?|"
                                 r"arguments|args|(?:hyper-?)?param(?:eter)?s|information|"
                                 r"info|details|setup|options)\b")
# ... not a phase of the run's work (`START OF MODEL TRAINING`, `MODEL BUILDING END`).
_NOT_SETTINGS = lazy_re.compile(r"(?i)\b(?:train\w*|fit\w*|epochs?|run\w*|start\w*|begin\w*|"
                                r"end\w*|eval\w*|test\w*|valid\w*|build\w*|load\w*)\b")
_SECTION_LINES = 200  # a section of settings runs no longer than this
# ... nor past the run saying it moves on to its work (LAVIS's `======  Model Attributes
# ======` JSON, then `[INFO] Building datasets...` and `Start training`: its first epoch's
# lines were read as settings).
_SECTION_ENDS = lazy_re.compile(r"(?i)(?:start(?:ing)?|begin(?:ning)?|building|"
                                r"train(?:ing)?)\b")
# A YAML configuration dumped whole (an OmegaConf or a torchpack config logged as one
# message: `model:`, then `  arch:` and `    n_wires: 4` indented under it, `optimizer:`,
# `  lr: 0.05`): a top-level key alone at the line's start, in a YAML key's lower case,
# heads settings. Not a split's or a result's label, which heads figures (`valid:`, then
# `  loss: 1.3156`, a notebook loop's epoch block: `metric_lines`).
_YAML_SECTION = lazy_re.compile(r"^[a-z][a-z0-9_]*:$")
_FIGURES_LABEL = lazy_re.compile(
    r"^(?:train\w*|valid\w*|val|dev|test\w*|eval\w*|results?|metrics?|scores?|summary|"
    r"stats|statistics|performance|loss\w*|acc\w*|report|final\w*|best\w*|epoch\w*|"
    r"step\w*|iter\w*|timing\w*|timers?|profile\w*):$")
# What a heading's line may hold: letters, a colon at its end (a cheap test first).
_HINTS = ("aram", "rgs", "rguments", "onfig", "ettings", "ptions", "opts", "lags",
          "ARAM", "RGS", "ONFIG", "ETTINGS", "PTIONS", "LAGS")


class SettingsBlock:
    """Whether each line is inside a block of settings under its heading."""

    def __init__(self) -> None:
        self._open = False
        self._repr = False  # inside an optimizer's repr, which its `)` closes
        self._section = False  # inside a banner's section of settings
        self._section_lines = 0
        # The last line read was a heading: understood, though no setting (a line that
        # said nothing is skipped when it comes again, and a heading skipped opens no block:
        # AutoGluon's fourth fit printed its hyperparameters as records).
        self.headed = False

    def inside(self, line: str) -> bool:
        """Whether `line` (after any rank label) is one of the block's settings; a heading
        opens a block, the first line outside it closes it."""
        self.headed = False
        if "===" in line or self._section:
            said = message(line).strip()
            banner = _BANNER.match(said) if "===" in said else None
            if banner is not None:
                words = banner.group(1)
                self._section = _SECTION_WORDS.search(words) is not None \
                    and _NOT_SETTINGS.search(words) is None
                return False
            if self._section:
                if said and self._section_lines < _SECTION_LINES \
                        and _SECTION_ENDS.match(said) is None:
                    self._section_lines += 1
                    return True
                self._section, self._section_lines = False, 0
        if self._repr:
            if line.strip() == ")":
                self._repr = self._open = False
                return True
            if _GROUP.match(line) is not None or (line[:1] in (" ", "\t") and line.strip()):
                return True
            self._repr = self._open = False
        if self._open:
            if (line[:1] in (" ", "\t") and line.strip()) or line.startswith("- "):
                return True
            said = message(line)
            if said.strip() and (said[:1] in (" ", "\t") or said.startswith("- ")
                                 or _ONE_SETTING.match(said) is not None
                                 or said.strip() in _BRACKETS
                                 or _DICT_ENTRY.match(said) is not None
                                 or _NAMED_BRACKETS.match(said) is not None):
                # (or a dict printed one entry a line, its brackets alone on theirs, behind
                # a head that took its indent away: AutoGluon's `User-specified model
                # hyperparameters to be fit:`, `{`, then `'CAT': [{}, {'depth': 6, …}],`
                # behind Ray's `(_dystack pid=167306)`)
                # (behind a logger's head, not indented: pt.darts's `04/28 04:22:15 PM |
                # ALPHA_LR=0.0003` under its `Parameters:`; one setting alone on a line)
                return True
            self._open = False
        if "=" in line and _ASSIGNED.match(line) is not None:
            return True
        if "=" in line and ":" in line and any(hint in line for hint in _PART_HINTS) \
                and _PART_SET_UP.match(message(line).strip()) is not None:
            return True
        if line.rstrip()[-1:] in ("}", "]", ")") and any(hint in line for hint in _HINTS) \
                and _INLINE.match(message(line).strip()) is not None:
            return True
        if line.endswith(" (") and _OPTIMIZER.match(line) is not None:
            self._repr = self._open = True
            return False
        if line[-1:] == ":" and _YAML_SECTION.match(line) is not None \
                and _FIGURES_LABEL.match(line) is None:
            self._open = True
            return True
        if (line.rstrip()[-1:] in (":", "{", "(", "[") or line[:1] == "#") \
                and any(hint in line for hint in _HINTS) \
                and _HEADING.match(message(line).strip()) is not None:
            self._open = True
            self.headed = True
        return False
