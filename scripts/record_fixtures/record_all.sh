#!/usr/bin/env bash
# Re-record every log fixture in tests/fixtures/logs/.
#
# Each run is a plain `python script.py ... > NAME.log 2>&1` (or torchrun /
# bash -c for the multi-process and SIGKILL cases) started from its own empty
# working directory under $WORK, so checkpoints and other outputs land there.
# The captured bytes are written to the fixture file untouched.
#
# Venvs (see tests/fixtures/logs/README.md for the exact versions):
#   .fixture-venv      torch 2.13.0 (CPU), transformers 5.x, lightning 2.6.x,
#                      keras 3 (torch backend), tqdm, rich
#   .fixture-venv-hf4  torch 2.13.0 (CPU), transformers 4.57.6, tqdm
#
# Usage: scripts/record_fixtures/record_all.sh [NAME ...]   (default: all)
set -u

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/scripts/record_fixtures"
OUT_DIR="$ROOT/tests/fixtures/logs"
WORK="${WORK:-/tmp/babysit-fixtures}"
PY="${PY:-$ROOT/.fixture-venv/bin/python}"
PY4="${PY4:-$ROOT/.fixture-venv-hf4/bin/python}"
TORCHRUN="${TORCHRUN:-$ROOT/.fixture-venv/bin/torchrun}"

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 KERAS_BACKEND=torch
unset PYTHONUNBUFFERED COLUMNS LINES

mkdir -p "$OUT_DIR" "$WORK"

want() {  # run NAME only if selected on the command line (or nothing was)
    [ "${#SELECTED[@]}" -eq 0 ] && return 0
    local n
    for n in "${SELECTED[@]}"; do [ "$n" = "$1" ] && return 0; done
    return 1
}

# rec NAME COMMAND...  -- run COMMAND in a fresh $WORK/NAME, stdout+stderr -> NAME.log
rec() {
    local name="$1"; shift
    want "$name" || return 0
    local dir="$WORK/$name"
    rm -rf "$dir"; mkdir -p "$dir"
    ( cd "$dir" && "$@" > "$OUT_DIR/$name.log" 2>&1 )
    local rc=$?
    printf '%-28s rc=%-4s %8s bytes\n' "$name.log" "$rc" "$(wc -c < "$OUT_DIR/$name.log")"
}

# The SIGKILL case: bash -c runs the loop, we kill -9 the python child from
# outside once 10 step lines are in the log, and keep whatever bash prints.
rec_sigkill() {
    local name=sigkill
    want "$name" || return 0
    local dir="$WORK/$name" log="$OUT_DIR/$name.log"
    rm -rf "$dir"; mkdir -p "$dir"
    : > "$log"
    bash -c "cd $dir && $PY $HERE/sigkill_loop.py; exit \$?" > "$log" 2>&1 &
    local bash_pid=$!
    until [ "$(grep -c '^step ' "$log")" -ge 10 ]; do sleep 0.1; done
    local child
    child=$(pgrep -P "$bash_pid" | head -1)   # the python process started by bash -c
    kill -9 "$child"
    wait "$bash_pid"
    printf '%-28s rc=%-4s %8s bytes\n' "$name.log" "$?" "$(wc -c < "$log")"
}

SELECTED=("$@")

# --- Hugging Face Trainer -------------------------------------------------
rec hf5_clean   "$PY"  "$HERE/hf_trainer.py" --scenario clean --out "$WORK/hf5_clean/out"
rec hf5_nan     "$PY"  "$HERE/hf_trainer.py" --scenario nan   --out "$WORK/hf5_nan/out"
rec hf4_clean   "$PY4" "$HERE/hf_trainer.py" --scenario clean --out "$WORK/hf4_clean/out"
rec hf4_nan     "$PY4" "$HERE/hf_trainer.py" --scenario nan   --out "$WORK/hf4_nan/out"

# --- Lightning ---------------------------------------------------------------
rec lightning_tqdm_clean "$PY" "$HERE/lightning_run.py" --bar tqdm --scenario clean --root "$WORK/lightning_tqdm_clean/run"
rec lightning_rich_clean "$PY" "$HERE/lightning_run.py" --bar rich --scenario clean --root "$WORK/lightning_rich_clean/run"
rec lightning_nan        "$PY" "$HERE/lightning_run.py" --bar tqdm --scenario nan   --root "$WORK/lightning_nan/run"

# --- plain PyTorch loops -----------------------------------------------------
rec torch_epoch_step_clean   "$PY" "$HERE/torch_loops.py" --scenario epoch_step
rec torch_spike              "$PY" "$HERE/torch_loops.py" --scenario spike
rec torch_spike_unrecovered  "$PY" "$HERE/torch_loops.py" --scenario spike_unrecovered
rec torch_divergence         "$PY" "$HERE/torch_loops.py" --scenario divergence
rec torch_user_exception     "$PY" "$HERE/torch_loops.py" --scenario user_exception
rec torch_cpu_oom            "$PY" "$HERE/torch_loops.py" --scenario cpu_oom
rec torch_cuda_oom_injected  "$PY" "$HERE/torch_loops.py" --scenario cuda_oom_injected
rec jsonl_metrics            "$PY" "$HERE/torch_loops.py" --scenario jsonl
rec tqdm_plain               "$PY" "$HERE/torch_loops.py" --scenario tqdm
rec nanogpt_style            "$PY" "$HERE/nanogpt_style.py"

# --- Keras 3 (torch backend) -------------------------------------------------
rec keras_clean    "$PY" "$HERE/keras_fit.py" --verbose 1
rec keras_verbose2 "$PY" "$HERE/keras_fit.py" --verbose 2

# --- torchrun / gloo -----------------------------------------------------------
rec torchrun_clean         "$TORCHRUN" --nproc_per_node 2 --master_port 29611 "$HERE/ddp_gloo.py" --scenario clean
rec torchrun_gloo_timeout  "$TORCHRUN" --nproc_per_node 2 --master_port 29612 "$HERE/ddp_gloo.py" --scenario timeout

# --- SIGKILL from outside ------------------------------------------------------
rec_sigkill

# --- format replays (NOT real Megatron-LM / torchtitan runs) ----------------------
rec megatron_format   "$PY" "$HERE/format_replay.py" --style megatron --save-dir "$WORK/megatron_format/checkpoints"
rec torchtitan_format "$TORCHRUN" --nproc_per_node 2 --master_port 29613 --local-ranks-filter 0 --role rank --tee 3 \
    "$HERE/format_replay.py" --style torchtitan --save-dir "$WORK/torchtitan_format/checkpoints"

# size guard
for f in "$OUT_DIR"/*.log; do
    [ "$(wc -c < "$f")" -gt 204800 ] && echo "WARNING: $f is larger than 200 KB"
done
exit 0
