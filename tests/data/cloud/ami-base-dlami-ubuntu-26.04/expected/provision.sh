#!/bin/bash
# Provisioning for the Neuron-ready AMI (Neuron 2.33.1, PyTorch 2.14.0, ubuntu-26.04),
# rendered by neuron-env VERSION. Packer runs it as root on the builder.
#
# It installs the shared bootstrap script (uploaded beside it) and runs it in image-build mode:
# every stage runs, the final 'neuron-env doctor' decides the exit status (a failure fails the
# build), and no instance-specific verdict is left in the image. The stage markers stay, so
# instances launched from the AMI skip the work that is already done.
set -euo pipefail
install -D -m 0755 /tmp/neuron-env-bootstrap /usr/local/sbin/neuron-env-bootstrap
rm -f /tmp/neuron-env-bootstrap
# shellcheck disable=SC2016  # the values are literal: nothing in them may expand
/usr/local/sbin/neuron-env-bootstrap --release 2.33.1 --torch 2.14 --neuron-env-source https://artifacts.example.com/neuron-env/neuron_env-0.1.0-py3-none-any.whl --neuron-env-sha256 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef --venv /opt/neuron-env/venv --system always --efa auto --python-env always --level 1 --no-tag --image-build
