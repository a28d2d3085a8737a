"""What several kinds of target are built from: the log targets (a file here, a file over
SSH) and the names of logs, a run composed of a log, a process and GPUs, a tracker with a
log to fall back on, and the rows a tracker returns.

Every kind may import from here; nothing here imports a kind (an import-linter contract
keeps it so), so no kind reaches another through it."""
