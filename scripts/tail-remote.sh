#!/usr/bin/env bash
# tail-remote.sh — the last lines of a log on another host, over ssh.
#
#   tail-remote.sh me@gpu-box /home/me/runs/train.log        # last 100 lines
#   tail-remote.sh gpu-box 'runs/train (2).log' 40           # an ~/.ssh/config alias works
#
# When the file is missing or unreadable it prints one line starting with [ERROR] and
# exits non-zero. The path and the count reach the remote shell as quoted positional
# arguments of `sh -s`: they are never parsed as shell code. Set BABYSIT_SSH to use a
# different ssh command line (e.g. "ssh -F ./ssh_config").
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: tail-remote.sh [user@]host /path/to/file [lines]" >&2
  exit 2
fi
host=$1
path=$2
lines=${3:-100}
if ! [[ $lines =~ ^[0-9]+$ ]]; then
  echo "[ERROR] the line count must be a number, got: $lines" >&2
  exit 2
fi
read -r -a ssh_cmd <<< "${BABYSIT_SSH:-ssh}"

exec "${ssh_cmd[@]}" -o BatchMode=yes -- "$host" "sh -s -- $(printf '%q ' "$path" "$lines")" <<'REMOTE'
file=$1
count=$2
if [ -f "$file" ] && [ -r "$file" ]; then
  exec tail -n "$count" -- "$file"
elif [ -e "$file" ]; then
  echo "[ERROR] $file exists but cannot be read (permissions?) on $(hostname)"
  exit 3
else
  echo "[ERROR] no such file on $(hostname): $file"
  exit 4
fi
REMOTE
