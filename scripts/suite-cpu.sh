#!/usr/bin/env bash
# Where the whole suite's CPU goes, by program: runs scripts/test.sh (with any pytest arguments
# given) under the kernel's process accounting and prints
#   - the machine's busy and idle CPU seconds over the run (/proc/stat): idle near zero means the
#     run is bound by CPU, and only less work (not more workers) makes it faster;
#   - the CPU seconds of every process that ended during the run, summed by program name (sa),
#     the costliest first: "python" is every interpreter started by its own name (torch ranks,
#     target probes, pip run as python -m pip), "python*" a process forked without exec (the test
#     fork server's console-script runs), "pt_elastic" torchrun, "neuron-env" the console script
#     started by path.
# tests.support.cpu_profile gives the same CPU per test instead; this adds what no test waits for
# (servers, daemons, processes a killed parent left behind) and says which programs cost it.
# Needs root (acct(2)); installs Debian's acct package where accton is missing.
# Usage: sudo bash scripts/suite-cpu.sh [pytest arguments...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $(id -u) != 0 ]]; then
  echo "suite-cpu.sh: process accounting needs root; run it with sudo." >&2
  exit 2
fi
if ! command -v accton >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq acct >/dev/null
fi

work=$(mktemp -d)
trap 'accton off >/dev/null 2>&1 || true; rm -rf -- "$work"' EXIT
touch "$work/pacct"

# busy and idle clock ticks of the whole machine (/proc/stat's first line)
ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat; }

read -r busy_before idle_before < <(ticks)
started=$SECONDS
accton "$work/pacct" >/dev/null
code=0
bash scripts/test.sh "$@" || code=$?
accton off >/dev/null
read -r busy_after idle_after < <(ticks)

hz=$(getconf CLK_TCK)
printf '\n== CPU over the run: %d s of wall time, %d s busy and %d s idle on %d cores\n' \
  "$((SECONDS - started))" "$(((busy_after - busy_before) / hz))" \
  "$(((idle_after - idle_before) / hz))" "$(nproc)"
printf '== CPU by program (processes that ended during the run), seconds:\n'
printf '%10s %10s  %s\n' "CPU" "processes" "program"
# sa: calls, real minutes ("re"), CPU minutes ("cp"), ..., name; its first line is the total
sa --list-all-names --dont-read-summary-files "$work/pacct" |
  awk 'NR > 1 { cp = $3; sub(/cp$/, "", cp); printf "%10.1f %10d  %s\n", cp * 60, $1, $NF }' |
  sort -rn | head -n 25
exit "$code"
