#!/usr/bin/env bash
# check-process.sh — is a training process alive, and what are its GPUs doing?
#
#   check-process.sh --pid 48291
#   check-process.sh --name train.py
#   check-process.sh me@gpu-box --name "uv run"      # the same, on another host over ssh
#
# Prints one JSON object: {"alive": true|false, "info": [processes], "gpu_stats": [GPUs]}.
# --name matches a fixed string anywhere in the command line (no regex, no shell); on a
# remote host the arguments are quoted with printf %q before they reach its shell.
set -euo pipefail

usage() {
  echo "usage: check-process.sh [user@host] (--pid N | --name NAME)" >&2
  exit 2
}

host=""
if [[ $# -gt 0 && $1 != --* ]]; then
  host=$1
  shift
fi
[[ $# -eq 2 ]] || usage
mode=$1
value=$2
case $mode in
  --pid) [[ $value =~ ^[0-9]+$ ]] || { echo "check-process.sh: --pid needs a number" >&2; exit 2; } ;;
  --name) [[ -n $value ]] || usage ;;
  *) usage ;;
esac

if [[ -n $host ]]; then
  # Run this very script on the remote host; only quoted words reach its shell.
  exec ssh -o BatchMode=yes -- "$host" "bash -s -- $(printf '%q ' "$mode" "$value")" < "$0"
fi

# Command lines carry secrets (`--hf-token hf_…`, `API_KEY=…`, `postgres://u:pw@h/db`):
# mask them before anything is printed, as babysit itself does.
redact() {
  local flags='token|secret|passw(or)?d|passphrase|pwd|api[_-]?key|access[_-]?key|auth|bearer|credential'
  printf '%s' "$1" | sed -E \
    -e "s#([A-Za-z0-9_.-]*($flags)[A-Za-z0-9_.-]*=)[^ ]+#\\1REDACTED#Ig" \
    -e "s#(--?[A-Za-z0-9_-]*($flags)[A-Za-z0-9_-]*|-k|-p) +[^ -][^ ]*#\\1 REDACTED#Ig" \
    -e 's#(://[^:/@ ]+:)[^@/ ]+@#\1REDACTED@#g' \
    -e 's#(hf_|sk-|ghp_|gho_|github_pat_|glpat-|xox[abprs]-)[A-Za-z0-9_-]{8,}#REDACTED#g' \
    -e 's#(AKIA|ASIA)[0-9A-Z]{16}#REDACTED#g'
}

json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/\\t}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=$(printf '%s' "$s" | tr -d '\000-\010\013\014\016-\037')
  printf '"%s"' "$s"
}

if [[ $mode == --pid ]]; then
  rows=$(ps -ww -o pid=,etimes=,stat=,rss=,args= -p "$value" 2>/dev/null || true)
else
  rows=$(ps -ww -eo pid=,etimes=,stat=,rss=,args= 2>/dev/null |
         NAME="$value" SELF="$$" awk '
           index($0, ENVIRON["NAME"]) && $1 != ENVIRON["SELF"] && $0 !~ /check-process[.]sh/ &&
           $0 !~ /awk / { print }' || true)
fi

info=""
alive=false
while read -r pid etimes stat rss args; do
  [[ -n ${pid:-} ]] || continue
  [[ $stat == Z* ]] || alive=true
  entry="{\"pid\": $pid, \"elapsed_seconds\": ${etimes:-0}, \"state\": $(json_string "$stat"),"
  entry+=" \"rss_kb\": ${rss:-0}, \"command\": $(json_string "$(redact "$args")")}"
  info+="${info:+, }$entry"
done <<< "$rows"

gpus=""
gpu_error=""
if command -v nvidia-smi >/dev/null 2>&1; then
  runner=(nvidia-smi)
  command -v timeout >/dev/null 2>&1 && runner=(timeout 10 nvidia-smi)
  if smi=$("${runner[@]}" --query-gpu=index,name,utilization.gpu,memory.used,memory.total \
            --format=csv,noheader,nounits 2>&1); then
    while IFS=',' read -r index name util used total; do
      [[ -n ${index:-} ]] || continue
      num() { local v=${1// /}; [[ $v =~ ^[0-9.]+$ ]] && printf '%s' "$v" || printf 'null'; }
      entry="{\"index\": $(num "$index"), \"name\": $(json_string "${name# }"),"
      entry+=" \"util_percent\": $(num "$util"), \"mem_used_mib\": $(num "$used"),"
      entry+=" \"mem_total_mib\": $(num "$total")}"
      gpus+="${gpus:+, }$entry"
    done <<< "$smi"
  else
    gpu_error="nvidia-smi failed: ${smi%%$'\n'*}"
  fi
else
  gpu_error="no nvidia-smi on this host"
fi

printf '{"alive": %s, "info": [%s], "gpu_stats": [%s]' "$alive" "$info" "$gpus"
[[ -n $gpu_error ]] && printf ', "gpu_error": %s' "$(json_string "$gpu_error")"
printf '}\n'
