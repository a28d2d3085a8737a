"""A shell's report that the job it ran died of a signal, in the words of its locale.

bash prints a job's fate with `strsignal()`, which glibc translates into the language
of `LC_MESSAGES`: a run started from a Chinese desktop ends `已杀死` where an English one
ends `Killed` (DreamerV3 under zh_CN, sealed-12), a German one `Getötet`. The same word
comes in three shapes, as in English:

- alone on its line (an interactive shell, or a script's own job): `已杀死`, `Getötet`,
  or with the core dump said after it (`段错误 (核心已转储)`, `Speicherzugriffsfehler
  (Speicherabzug geschrieben)`);
- after a job number (job control): `[1]+  已杀死               python train.py`;
- after a script's line and the child's PID (`train.sh: 第 3 行：12345 已杀死  python …`,
  `run.sh: Zeile 3: 12345 Getötet  python …`).

zsh does not translate its own words (`zsh: killed`, `zsh: segmentation fault`,
`zsh: abort`…), and fish says the signal's name (`fish: Job 1, 'python train.py'
terminated by signal SIGKILL (Forced quit)`): both are read here too.

The words are glibc's translations (libc.po, `Killed`, `Terminated`, `Hangup`,
`Segmentation fault`, `Aborted`, `Bus error`, `Floating point exception`, `Illegal
instruction`) and bash's (bash.po, `line %d: `, `(core dumped)`). A stop's words
(SIGTERM, SIGHUP: `Terminado`, `Beendet`, `Complété`, `Завершено`) are also a language's
ordinary words for "finished", so they are read only after a job number or a script's
line, where nothing but a shell puts them; a kill's or a fault's words are read alone.
"""

from __future__ import annotations

import re

# The words, by locale (glibc's libc.po: zh_CN, zh_TW, ja, ko, de, fr, es, it, pt, pt_BR,
# ru, uk, pl, nl, cs, tr, vi; the English ones are read in `events`).
# SIGKILL (`Killed`): most often the kernel's OOM killer.
_KILLED = ("已杀死", "強制結束", "強制終了", "죽었음", "Getötet", "Processus arrêté",
           "Terminado (killed)", "Ucciso", "Morto", "Убито", "Вбито", "Unicestwiony",
           "Geëlimineerd", "Zabit (SIGKILL)", "Süreç durduruldu", "Bị buộc kết thúc")
# The process's own faults (`Segmentation fault`, `Bus error`, `Floating point
# exception`, `Illegal instruction`).
_FAULTS = (
    # English too where `events` has no signature of its own for the word: bash prints
    # `Floating point exception` alone on its line (OpenPCDet's CT3D dying at its first
    # batch, sealed-19), padded with spaces
    "Floating point exception", "Illegal instruction",
    "段错误", "总线错误", "浮点数例外", "非法指令", "程式記憶體區段錯誤", "匯流排錯誤",
    "浮點數例外", "無效指令", "バスエラー", "浮動小数点例外", "세그멘테이션 오류", "버스 오류",
    "부동 소수점 예외", "명령어가 잘못됨", "Speicherzugriffsfehler", "Bus-Zugriffsfehler",
    "Gleitkomma-Ausnahme", "Ungültiger Maschinenbefehl", "Erreur de segmentation",
    "Erreur du bus", "Exception en point flottant", "Instruction non permise",
    "Violación de segmento", "Error del bus", "Excepción de coma flotante",
    "Instrucción ilegal", "Errore di segmentazione", "Errore di bus",
    "Eccezione in virgola mobile", "Istruzione non consentita", "Falta de segmentação",
    "Erro de bus", "Excepção de vírgula flutuante", "Instrução ilegal",
    "Falha de segmentação", "Erro no barramento", "Exceção de ponto flutuante",
    "Ошибка сегментирования", "Ошибка шины", "Исключение в операции с плавающей точкой",
    "Недопустимая инструкция", "Помилка адресування", "Помилка каналу обміну даними",
    "Помилка обчислень з рухомою комою", "Помилкова інструкція",
    "Naruszenie ochrony pamięci", "Błąd szyny", "Błąd w obliczeniach zmiennoprzecinkowych",
    "Błędna instrukcja", "Segmentatiefout", "Busfout", "Drijvendekomma-berekeningsfout",
    "Ongeldige instructie", "Neoprávněný přístup do paměti (SIGSEGV)",
    "Chyba na sběrnici (neplatná adresa) (SIGBUS)",
    "Výjimka v pohyblivé řádové čárce (SIGFPE)", "Nedovolená instrukce (SIGILL)",
    "Parçalama arızası", "Veri yolu hatası", "Gerçel sayı istisnası", "Yönerge kuraldışı",
    "Lỗi phân đoạn", "Lỗi bus", "Ngoại lệ dấu chấm động", "Chỉ lệnh không hợp lệ")
# SIGABRT (`Aborted`): a fault too, but its words are also a language's "cancelled"
# (`Abgebrochen`, `Annullato`): read alone only with the core dump said after it.
_ABORTED = ("已放弃", "中止", "중지됨", "Abgebrochen", "Abandon", "Abortado", "Annullato",
            "Аварийный останов", "Перервано", "Przerwane", "Afgebroken",
            "Neúspěšně ukončen (SIGABRT)", "İptal edildi", "Bị hủy bỏ")
# Stops sent from outside (`Terminated`, `Hangup`): read only after a shell's prefix.
_STOPS = ("已终止", "挂起", "終止", "掛斷", "종료됨", "끊어짐", "Beendet", "Aufgelegt", "Complété",
          "Fin de la connexion (raccroché)", "Terminado", "Colgar (hangup)", "Terminato",
          "Chiusura", "Desligar", "Desconexão", "Завершено", "Обрыв терминальной линии",
          "Припинено", "Від’єднання", "Zakończony", "Rozłączenie", "Beëindigd", "Opgehangen",
          "Ukončen (SIGTERM)", "Odpojen terminál (SIGHUP)", "Sonlandırıldı", "Tıkanma",
          "Đã kết thúc", "Tạm dừng")
# bash's `line %d: ` by locale (bash.po), before the child's PID in a script's report.
_LINE_WORD = (r"(?:\bline|Zeile|ligne|línea|linha|riga|строка|рядок|linia|regel|řádek|"
              r"dòng|행) ?\d+ ?[:：]|第 ?\d+ ?[行列] ?[:：]|\d+ ?行 ?[:：]|\d+\. satır:")
# The job's own prefix: a job number, or a script's line and the child's PID.
_PREFIX = rf"(?:\[\d+\][+-]? +|.*?(?:{_LINE_WORD}) *\d+ +)"
# After the word: bash's `(core dumped)` in any language (a parenthesis), then, padded to
# the job table's column, the command.
_CORE = r"\s*[(（][^)）]*[)）]"
_AFTER = rf"(?:{_CORE})?(?:\s+\S.*)?\s*$"
_ALONE = rf"(?:{_CORE})?(?:\s{{2,}}\S.*)?\s*$"


def _words(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def _said(words: tuple[str, ...], alone: str | None) -> str:
    """The word after the shell's prefix; or, when `alone` is given, on its own line too."""
    after_prefix = rf"^{_PREFIX}(?:{_words(words)}){_AFTER}"
    return after_prefix if alone is None else rf"{after_prefix}|^(?:{_words(words)}){alone}"


# The three reports, as patterns for `events.SIGNATURES`: a kill (HOST_KILL), a fault
# (SEGFAULT), a stop (STOPPED_BY_SIGNAL).
SHELL_KILLED = rf"{_said(_KILLED, _ALONE)}|terminated by signal SIGKILL\b"
SHELL_FAULT = (rf"{_said(_FAULTS, _ALONE)}|{_said(_ABORTED, _CORE + _ALONE)}|"
               r"^zsh: (?:segmentation fault|abort|bus error|floating point exception|"
               r"illegal hardware instruction)\s|"
               r"terminated by signal SIG(?:SEGV|ABRT|BUS|FPE|ILL)\b")
SHELL_STOPPED = (rf"{_said(_STOPS, None)}|^zsh: (?:hangup|interrupt)\s|"
                 r"terminated by signal SIG(?:TERM|HUP|INT)\b")

# The cheap check before the signatures run (see `events.find_events`): every report has
# its word's first token as a token of the line (a set lookup, not a scan per word).
_FIRST_TOKENS = frozenset(w.split()[0] for w in (*_KILLED, *_FAULTS, *_ABORTED, *_STOPS))


def may_report(line: str) -> bool:
    """Whether a line may be a shell's report of a signal (see the patterns above)."""
    if len(line) >= 400:
        return False
    if "zsh: " in line or "terminated by signal" in line:
        return True
    tokens = line.replace("(", " ").replace("（", " ").split()
    return not _FIRST_TOKENS.isdisjoint(tokens)
