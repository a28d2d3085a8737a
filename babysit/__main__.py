# Ctrl-C can land while Python is still importing babysit itself, before entry.main has
# a handler: that is an interruption like any other, not a traceback. (exit_codes is a
# few lines with no imports of its own, loaded first so that the words are entry's.)
from babysit.exit_codes import NO_VERDICT, ExitCode

try:
    from babysit.entry import main
except KeyboardInterrupt:
    import sys

    sys.stderr.write(NO_VERDICT + "\n")
    raise SystemExit(ExitCode.INTERRUPTED) from None

raise SystemExit(main())
