import sys

# Ctrl-C can land while Python is still importing babysit itself, before entry.main has
# a handler: that is an interruption like any other, not a traceback — wherever it lands,
# even while exit_codes (the statuses and their words) is being loaded: then its words
# are not there yet, and these say the same.
try:
    # First: a Ctrl-C that an import's callback swallows is kept, not lost
    # (babysit.stopping imports nothing that is not loaded already).
    from babysit import stopping

    sys.unraisablehook = stopping.note_swallowed_stops
    from babysit.entry import main
except KeyboardInterrupt:
    _codes = sys.modules.get("babysit.exit_codes")
    sys.stderr.write(getattr(_codes, "NO_VERDICT", "babysit: interrupted before the watch "
                                                   "began: no verdict written") + "\n")
    raise SystemExit(130) from None

raise SystemExit(main())
