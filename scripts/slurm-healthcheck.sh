#!/usr/bin/env bash
# neuron-env Slurm node health check: runs `neuron-env preflight` on this node and drains the node,
# with the failing check ids as the reason, when it is not ready for TorchNeuron.
#
# Use it as HealthCheckProgram (slurmd runs it periodically, as root) or as a Prolog. As a Prolog, a
# failure (a non-zero exit) makes slurmd drain the node itself ("Prolog error") and Slurm requeue
# the job *held*: squeue shows it PENDING, "launch failed requeued held", and it waits until
# someone runs `scontrol release JOBID` (after the node is fixed or drained, so it lands elsewhere).
# Render it for your installation with:
#   neuron-env preflight --emit slurm-healthcheck --python PATH [--torch X.Y] ... > FILE
# slurm.conf:
#   HealthCheckProgram=/etc/slurm/neuron-env-healthcheck.sh
#   HealthCheckInterval=300
#   HealthCheckNodeState=IDLE
set -uo pipefail

# --- settings (written by `neuron-env preflight --emit slurm-healthcheck`) ---
NEURON_ENV=${NEURON_ENV:-neuron-env}
PYTHON=${PYTHON:-python3}
TIMEOUT=${TIMEOUT:-120}
PREFLIGHT_ARGS=(--level 0)
# --- end of settings ---

node=${SLURMD_NODENAME:-$(hostname -s)}
report=$(mktemp)
trap 'rm -f "$report"' EXIT

timeout --kill-after=10 "$TIMEOUT" \
  "$NEURON_ENV" preflight "${PREFLIGHT_ARGS[@]}" --format json --output "$report" >/dev/null 2>&1
status=$?

failing_checks() {
  "$PYTHON" - "$report" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(1)
allowed = set(doc.get("allowed", []))
bad = [f["check"] for f in doc["findings"] if f["status"] in ("fail", "error") and f["check"] not in allowed]
if doc.get("strict"):
    bad += [f["check"] for f in doc["findings"] if f["status"] == "warn" and f["check"] not in allowed]
print(",".join(bad))
PY
}

case $status in
  0) exit 0 ;;
  1) reason="neuron-env: $(failing_checks || echo 'unreadable report')" ;;
  3) reason="neuron-env could not judge: $(failing_checks || echo 'unreadable report')" ;;
  124 | 137) reason="neuron-env preflight did not finish within ${TIMEOUT}s" ;;
  *) reason="neuron-env preflight could not run (exit $status)" ;;
esac
reason=${reason:0:200}
if said=$(scontrol update nodename="$node" state=drain reason="$reason" 2>&1); then
  message="drained $node: $reason"
else # not root nor a Slurm operator (run by a job's user): the node still fails, undrained
  message="could not drain $node: scontrol said: ${said:-nothing}; the node failed: $reason"
fi
echo "neuron-env-healthcheck: $message" >&2
logger -t neuron-env-healthcheck "$message" 2>/dev/null || true
exit 1
