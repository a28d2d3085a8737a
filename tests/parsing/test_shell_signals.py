"""The shell's report that a job died of a signal, in its locale (issue 23, item 4: runs
that died, left RUNNING). The words are glibc's translations of `strsignal()` (libc.po)
and bash's of `line %d: ` and `(core dumped)` (bash.po), as a run started under that
locale prints them; DreamerV3's log (sealed-12) ends on zh_CN's `已杀死`."""

from __future__ import annotations

import pytest

from babysit.model import EventKind
from babysit.parsing.events import find_events


def _kinds(line: str) -> set[EventKind]:
    return {e.kind for e in find_events(line)}


@pytest.mark.parametrize("line", [
    "已杀死",  # zh_CN, bash's report of its foreground job (DreamerV3, sealed-12)
    "Getötet",  # de_DE
    "Убито",  # ru_RU
    "強制終了",  # ja_JP
    "Processus arrêté",  # fr_FR
    "[1]+  已杀死               python train.py --config cfg.yaml",  # job control
    "[2]-  Getötet                 nohup python train.py",
    "./run.sh: 第 3 行：12345 已杀死               python train.py",  # a script's line
    "run.sh: Zeile 12: 4567 Getötet                 python train.py --lr=0.1",
    "train.sh: строка 7: 31337 Убито              python main.py",
    "fish: Job 1, 'python train.py' terminated by signal SIGKILL (Forced quit)",
])
def test_a_kill_in_the_shell_s_locale_is_a_host_kill(line: str) -> None:
    assert EventKind.HOST_KILL in _kinds(line)


@pytest.mark.parametrize("line", [
    "段错误 (核心已转储)",  # zh_CN `Segmentation fault (core dumped)`
    "段错误",
    "Speicherzugriffsfehler (Speicherabzug geschrieben)",  # de_DE
    "Erreur de segmentation (core dumped)",  # fr_FR
    "已放弃 (核心已转储)",  # zh_CN `Aborted (core dumped)`
    "./train.sh: línea 9: 2211 Abortado                (`core' generado) python train.py",
    "zsh: segmentation fault  python train.py",  # zsh's own words (never translated)
    "zsh: abort      python train.py",
    "fish: Job 1, 'python train.py' terminated by signal SIGSEGV (Address boundary error)",
    # English ones that have no signature of their own: bash pads the word with spaces
    # (sealed-19's OpenPCDet CT3D), or names the script's line and the child
    "Floating point exception   ", "Illegal instruction (core dumped)",
    "./run.sh: line 3: 12345 Floating point exception (core dumped) python train.py",
    # Python's faulthandler on Windows, wrapped by PowerShell (sealed-19)
    r".\.venv\Scripts\python.exe : Windows fatal exception: access violation",
    "Windows fatal exception: stack overflow",
])
def test_a_fault_in_the_shell_s_locale_is_a_native_crash(line: str) -> None:
    assert EventKind.SEGFAULT in _kinds(line)


@pytest.mark.parametrize("line", [
    "[1]+  已终止               python train.py",  # zh_CN `Terminated`
    "run.sh: Zeile 3: 4242 Beendet                 python train.py",  # de_DE
    "./run.sh: línea 3: 4242 Terminado               python train.py",  # es_ES
    "zsh: hangup     python train.py",
])
def test_a_stop_in_the_shell_s_locale_is_a_stop(line: str) -> None:
    assert EventKind.STOPPED_BY_SIGNAL in _kinds(line)


@pytest.mark.parametrize("line", [
    # A stop's words are also "finished" in their language: a run's own last word.
    "Beendet", "Terminado", "Complété", "Завершено", "已终止",
    # An abort's are also "cancelled": alone, without the core dump said, a word.
    "Abgebrochen", "Annullato",
    # Words in a sentence, not a shell's report.
    "Morto il processo figlio, riavvio", "Getötet wurde niemand: epoch 3 loss 0.41",
    "Ucciso: 3, Morto: 2",
    # a numpy warning naming the fault, a C++ exception faulthandler reports though it
    # may be caught
    "RuntimeWarning: a Floating point exception was raised in divide",
    "Windows fatal exception: code 0xe06d7363",
])
def test_the_same_words_in_a_run_s_own_output_are_not_a_signal(line: str) -> None:
    assert _kinds(line).isdisjoint({EventKind.HOST_KILL, EventKind.SEGFAULT,
                                    EventKind.STOPPED_BY_SIGNAL})
