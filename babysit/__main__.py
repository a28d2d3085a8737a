# Ctrl-C can land while Python is still importing babysit itself, before entry.main has
# a handler: that is an interruption like any other, not a traceback.
try:
    from babysit.entry import main
except KeyboardInterrupt:
    import sys

    sys.stderr.write("babysit: interrupted before the watch began: no verdict written\n")
    raise SystemExit(130) from None

raise SystemExit(main())
