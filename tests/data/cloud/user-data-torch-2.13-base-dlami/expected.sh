#!/bin/bash
# Boot-time setup and validation of a Trainium host, rendered by neuron-env VERSION
# for Neuron 2.33.1, PyTorch 2.13.0, trn2.48xlarge, ubuntu-26.04.
#
# cloud-init runs this once per instance. It installs neuron-env's bootstrap script and runs it:
# the script installs what the image lacks (neuron-env itself, the Neuron packages, EFA, the
# Python environment), then validates the host with 'neuron-env doctor'.
#   log:    /var/log/neuron-env/bootstrap.log
#   report: /var/log/neuron-env/doctor.json
#   marker: /var/lib/neuron-env/status (ok, warn, fail or error); /var/lib/neuron-env/ready
#           exists only when the host passed
#   tag:    neuron-env:status on this instance, when its instance profile may tag it
set -euo pipefail
umask 022
install -d -m 0755 /usr/local/sbin
cat > /usr/local/sbin/neuron-env-bootstrap <<'NEURON_ENV_BOOTSTRAP'
[scripts/bootstrap.sh, verbatim: 364 lines, checked by the test]
NEURON_ENV_BOOTSTRAP
chmod 0755 /usr/local/sbin/neuron-env-bootstrap
# shellcheck disable=SC2016  # the values are literal: nothing in them may expand
exec /usr/local/sbin/neuron-env-bootstrap --release 2.33.1 --torch 2.13 --neuron-env-source pypi --neuron-env-sha256 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef --neuron-env-spec neuron-env==VERSION --venv /opt/neuron-env/venv --system auto --efa auto --python-env auto --level 2
