#!/bin/bash
# Look-alikes of the XLA line in a TorchNeuron launch script: nothing here is reported.
export NEURON_RT_VISIBLE_CORES=0-63
export NEURON_RT_ROOT_COMM_ID="$MASTER_ADDR:41000"
export TORCH_NEURONX_NEFF_CACHE_DIR=/var/cache/neff
echo "NEURON_PJRT_PROCESS_INDEX=0 is not needed any more"
# export NEURON_PJRT_PROCESS_INDEX=$SLURM_NODEID
torchrun --nproc_per_node=64 --nnodes="$SLURM_NNODES" train.py --batch-size 32
torchrun --nproc_per_node=4 train.py
python train.py --nproc_per_node=32
sbatch --export=ALL,TORCH_NEURONX_LOG_LEVEL=3 job.sbatch
pip install transformers accelerate peft
