"""Keras's `fit` seen to return: another loop's bar under the last epoch's header.

Keras draws one bar per epoch under its `Epoch N/M` header, counting the epoch's batches
up to their total, with the loss beside it. When `fit` returns, a notebook or a script
goes on with the model, and `predict` or `evaluate` draw bars of their own — under the
same header, since nothing printed a new one: a bar with no metric at all (`predict`:
`8/8 ━━━━ 0s 3ms/step`, moku-examples' DFT layer and classifier notebooks, sealed-10), or
one of another total (`evaluate` over the validation set). `fit` returns early only when a
callback stops it (Keras's `EarlyStopping`, silent at its default `verbose=0`;
`TerminateOnNaN`) or an exception ends it (a traceback, read as such): so after the
epoch's own bar finished, such a bar says training is over wherever it stood. Short of
the planned epochs the run ENDED (over, its reason unsaid), as a notebook cell that
returned (`closing.CELL_ENDED`); at the last planned epoch Keras's own last bar already
said the run finished. A bar of another loop between epochs (a callback's evaluation)
is followed by the next epoch's header and bars: training went on, and the end said too
early is withdrawn, as any completion followed by training is.
"""

from __future__ import annotations

from babysit.model import EventKind, LogEvent
from babysit.parsing.closing import CELL_ENDED


def fit_returned(epoch: int, epochs: int, finished: bool, in_round: bool) -> LogEvent | None:
    """The end a Keras bar of another loop says, under the header of `epoch` of `epochs`
    planned, when the epoch's training bar `finished`; None inside an outer loop's round
    (one `fit` call of many: its end is no end of the run) or at the plan (said already)."""
    if not finished or in_round or epoch >= epochs:
        return None
    return LogEvent(EventKind.COMPLETED,
                    f"Keras's fit returned after epoch {epoch} of {epochs} (another loop's "
                    f"bar followed it: predict or evaluate)", CELL_ENDED)
