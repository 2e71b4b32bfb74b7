#!/bin/sh
# Mentions that are not XLA use: messages, comments, here-documents, other variables.
echo "neuron_parallel_compile is not needed any more"
echo 'XLA_USE_BF16=1 was replaced by torch.autocast'
printf '%s\n' "export XLA_FLAGS=--xla_dump_to=/tmp"
# neuron_parallel_compile torchrun train.py
export NEURON_RT_VISIBLE_CORES=0-3
cat <<'NOTES' > notes.txt
neuron_parallel_compile torchrun train.py
export XLA_USE_BF16=1
NOTES
use_neuron_parallel_compile_cache=1
