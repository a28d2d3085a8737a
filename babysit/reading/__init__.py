"""Reading log bytes: splitting appended bytes into lines, and scanning long histories fast.

Shared by every target that follows a log file, local or remote."""
