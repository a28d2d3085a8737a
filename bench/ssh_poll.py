"""Benchmark remote polling: babysit's persistent SSH connection vs `ssh host tail`.

Starts a throwaway OpenSSH server on loopback (as the tests do), writes a 100k-line
training log, then, side by side in one run, for each of `--polls` polls that follow
an append of 20 lines:

  babysit   one poll of RemoteLogTarget (stat + read from the saved offset over SFTP,
            parse, on the one connection opened at the start)
  baseline  `ssh host tail -n 100 FILE` (a new connection per poll, as the seed does)

It prints median latency and payload bytes per poll, and the ratio. Target: babysit's
latency at most 1/5 of the baseline's.

Usage: python bench/ssh_poll.py [--polls 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--polls", type=int, default=30)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from babysit.remote.address import parse_remote
    from babysit.targets.common.ssh_log import RemoteLogTarget
    from tests.remote.conftest import SSHD, make_server

    if SSHD is None:
        sys.exit("needs an OpenSSH server (sshd) installed")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = make_server(root / "sshd")
        server.start()
        os.environ["HOME"] = str(server.home)
        os.environ.pop("SSH_AUTH_SOCK", None)
        log = root / "train.log"
        with log.open("w") as handle:
            for step in range(1, 100_001):
                handle.write(f"step {step}/200000 | loss={2.5 - step * 1e-5:.4f} | lr=3e-4 | "
                             f"grad_norm=0.87 | 142 samples/s\n")
        text = f"{server.alias}:{log}"
        target = RemoteLogTarget(text, parse_remote(text))
        target.poll()  # the baseline poll (history scan), not measured
        ssh = ["ssh", "-F", str(server.home / ".ssh" / "config"), "-o",
               f"UserKnownHostsFile={server.home / '.ssh' / 'known_hosts'}", "-o",
               "BatchMode=yes", server.alias]
        step = 100_000
        ours, theirs, our_bytes, their_bytes = [], [], [], []
        for _ in range(args.polls):
            with log.open("a") as handle:
                for _ in range(20):
                    step += 1
                    handle.write(f"step {step}/200000 | loss=1.5000 | lr=3e-4 | "
                                 f"grad_norm=0.87 | 142 samples/s\n")
            start = time.perf_counter()
            snapshot = target.poll()
            ours.append(time.perf_counter() - start)
            our_bytes.append(snapshot.log.new_bytes)
            start = time.perf_counter()
            done = subprocess.run([*ssh, "tail", "-n", "100", str(log)], capture_output=True,
                                  check=True)
            theirs.append(time.perf_counter() - start)
            their_bytes.append(len(done.stdout))
        connects = target.connection.connects
        target.close()
        server.kill()
    ours_ms, theirs_ms = statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3
    print(f"{args.polls} polls of a 100k-line log over loopback SSH, 20 new lines each")
    print(f"{'':34} {'babysit':>12} {'ssh tail -n 100':>16}")
    print(f"{'median latency per poll':34} {ours_ms:10.2f}ms {theirs_ms:14.2f}ms")
    print(f"{'payload bytes per poll':34} {statistics.median(our_bytes):12.0f} "
          f"{statistics.median(their_bytes):16.0f}")
    print(f"{'SSH connections opened':34} {connects:12d} {args.polls:16d}")
    print(f"latency ratio babysit/baseline: {ours_ms / theirs_ms:.3f} (target ≤ 0.2)")


if __name__ == "__main__":
    main()
