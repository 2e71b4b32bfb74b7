#!/bin/bash
# A serving launch script of the NxD Inference disaggregated-inference tutorial's era (it exports
# NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=2), with a Neuron 1.x core grouping and a PyTorch/XLA
# flag the xla-env rule lists only by its XLA_ prefix.
set -euo pipefail

export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=2  # expect: deprecated-env
export NEURONCORE_GROUP_SIZES=4  # expect: deprecated-env
export XLA_USE_SPMD=1  # expect: xla-env
export NEURON_RT_VISIBLE_CORES=0-31
python serve.py --port 8080
