"""Real W&B runs for the tests: wandb.init(mode="offline") in child processes
(wandb_writer.py), each in its own root with its own W&B directories."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

WRITER = Path(__file__).parent / "wandb_writer.py"
STEPS = 10
WIDE = 4000  # numeric keys at step 0 of the "wide" run: a record over three blocks long


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WANDB_") or k == "WANDB_X_HISTORY_VALUE_ENCODING"}
    env.update(
        WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_GIT="true",
        WANDB_DISABLE_CODE="true",
        # wandb-core flushes the .wandb file every 15 s by default; a live reader needs less.
        WANDB_X_TRANSACTION_LOG_FLUSH_INTERVAL="0.1",
        WANDB_CONFIG_DIR=str(root / "config"), WANDB_CACHE_DIR=str(root / "cache"),
        WANDB_DATA_DIR=str(root / "data"))
    env.update(extra)
    return env


def _start(root: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    root.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, str(WRITER), str(root), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(root, **env))


def make_runs(base: Path) -> dict[str, tuple[Path, int]]:
    """Each finished writer's root directory and exit status, started side by side."""
    plans: dict[str, tuple[list[str], dict[str, str]]] = {
        "finish": (["--mode", "finish"], {}),
        "nan": (["--mode", "nan", "--at", "5"], {}),
        "raise": (["--mode", "raise", "--at", "5"], {}),
        "kill": (["--mode", "kill", "--at", "5"], {}),
        "wide": (["--mode", "finish", "--wide", str(WIDE)], {}),
        "typed": (["--mode", "finish"], {"WANDB_X_HISTORY_VALUE_ENCODING": "json,typed"}),
    }
    procs = {name: _start(base / name, "--steps", str(STEPS), *args, **env)
             for name, (args, env) in plans.items()}
    done: dict[str, tuple[Path, int]] = {}
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=180)
        if name not in ("raise", "kill"):
            assert proc.returncode == 0, err[-3000:]
        done[name] = (base / name, proc.returncode)
    return done
