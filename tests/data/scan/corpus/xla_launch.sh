#!/bin/bash
# An XLA-era launch script: pre-compile the graphs, then train.
set -euo pipefail

export XLA_USE_BF16=1  # expect: xla-env
export NEURON_CC_FLAGS="--model-type transformer"
PJRT_DEVICE=NEURON torchrun --nproc_per_node=2 train.py  # expect: xla-env
export TPU_NUM_DEVICES XLA_IR_DEBUG  # expect: xla-env, xla-env

neuron_parallel_compile torchrun --nproc_per_node=2 train.py  # expect: xla-parallel-compile
if [ -n "${WARM:-}" ]; then NEURON_EXTRACT_GRAPHS_ONLY=1 neuron_parallel_compile python train.py; fi  # expect: xla-env, xla-parallel-compile
timeout 3600 /opt/aws/bin/neuron_parallel_compile ./run.sh && echo done  # expect: xla-parallel-compile
