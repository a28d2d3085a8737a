"""A training line printed in another language, its figures named in English for the
readers.

Scripts written in Chinese, Korean, Japanese, Russian, Spanish, Portuguese, German or
French name their figures in their own words: a Korean MNIST loop's `에폭 5 | 배치  100/469
( 21.3%) | 손실 0.1889`, a Chinese one's `训练损失: 0.25，验证准确率: 91.2%`, a Spanish
one's `Época 3 - pérdida: 0.41 - precisión: 0.87`. Every reader knows `epoch`, `loss` and
`accuracy`; none knows `에폭`, `손실` or `pérdida`, so the whole run went unread. The
words that name a loop's counters and its figures are put in English before the readers
see the line (only what the metric readers read: events and the run's own sentences of
an end are read in the line as printed). A word of a script that writes words together
is replaced with spaces around it, and full-width punctuation with its ASCII form, so
`训练损失：0.25` reads ` train  loss  : 0.25`.
"""

from __future__ import annotations

import re

# Each language's words for a loop's counters and figures, longest first where one
# contains another (`准确率` before `准确`). The split's words only where they join their
# figure's (`验证准确率`, `검증 손실`): a Spanish `Validación: 86.55%` alone, after a grid
# search's runs, names no series of its own.
_WORDS: tuple[tuple[str, str], ...] = (
    # Chinese
    ("学习率", "lr"), ("准确率", "accuracy"), ("正确率", "accuracy"), ("精确率", "precision"),
    ("召回率", "recall"), ("准确度", "accuracy"), ("精度", "accuracy"), ("损失", "loss"),
    ("训练集", "train"), ("验证集", "val"), ("测试集", "test"), ("验证", "val"),
    ("测试", "test"), ("轮次", "epoch"), ("批次", "batch"), ("步数", "step"),
    ("平均", "mean"), ("耗时", "time"), ("用时", "time"), ("训练", "train"),
    # Japanese
    ("エポック", "epoch"), ("バッチ", "batch"), ("ステップ", "step"), ("損失", "loss"),
    ("正解率", "accuracy"), ("学習率", "lr"), ("検証", "val"), ("テスト", "test"),
    ("訓練", "train"),
    # Korean
    ("에포크", "epoch"), ("에폭", "epoch"), ("배치", "batch"), ("스텝", "step"),
    ("손실", "loss"), ("정확도", "accuracy"), ("학습률", "lr"), ("검증", "val"),
    ("평가", "eval"), ("테스트", "test"), ("평균", "mean"), ("학습", "train"),
    # Russian
    ("эпоха", "epoch"), ("Эпоха", "epoch"), ("эпохи", "epoch"), ("Эпохи", "epoch"),
    ("потери", "loss"), ("Потери", "loss"), ("потеря", "loss"), ("Потеря", "loss"),
    ("точность", "accuracy"), ("Точность", "accuracy"), ("шаг", "step"), ("Шаг", "step"),
    # Spanish, Portuguese, French, German (their accented words)
    ("Época", "epoch"), ("época", "epoch"), ("pérdida", "loss"), ("Pérdida", "loss"),
    ("precisión", "accuracy"), ("Precisión", "accuracy"), ("acurácia", "accuracy"),
    ("Acurácia", "accuracy"), ("precisão", "accuracy"), ("Precisão", "accuracy"),
    ("époque", "epoch"), ("Époque", "epoch"),
)
# The same languages' words written in ASCII alone (a line with no accent at all).
_ASCII_WORDS: tuple[tuple[str, str], ...] = (
    ("Perdida", "loss"), ("perdida", "loss"), ("Epoca", "epoch"), ("epoca", "epoch"),
    ("Perda", "loss"), ("perda", "loss"), ("Verlust", "loss"), ("verlust", "loss"),
    ("Genauigkeit", "accuracy"), ("genauigkeit", "accuracy"), ("Epoche", "epoch"),
    ("Perte", "loss"), ("perte", "loss"),
)
_ASCII_HINTS = ("erdid", "poca", "erda", "erlust", "enauigkeit", "poche", "erte")
_FULL_WIDTH = str.maketrans({"：": " : ", "，": " , ", "；": " ; ", "（": " (", "）": ") ",
                             "【": "[", "】": "]", "％": "%"})
_FOREIGN = re.compile("|".join(re.escape(word) for word, _ in _WORDS))
_FOREIGN_ASCII = re.compile(r"\b(?:" + "|".join(re.escape(w) for w, _ in _ASCII_WORDS) + r")\b")
_ENGLISH = dict(_WORDS) | dict(_ASCII_WORDS)
_CJK = 0x2E80  # where the scripts that write words together begin


def in_english(text: str) -> str:
    """The line with its figures' and counters' names in English (itself when it has
    none in another language)."""
    if text.isascii():
        if not any(hint in text for hint in _ASCII_HINTS):
            return text
        return _FOREIGN_ASCII.sub(lambda m: _ENGLISH[m.group(0)], text)
    return _FOREIGN.sub(_english, text.translate(_FULL_WIDTH))


def _english(match: re.Match[str]) -> str:
    """A word in English: set apart by spaces where its script writes words together
    (Chinese, Japanese, Korean), as it stands where words are already apart."""
    word = match.group(0)
    english = _ENGLISH[word]
    return f" {english} " if ord(word[0]) >= _CJK else english
