"""The per-rank side of ``neuron-env collectives``: runs in the target interpreter under torchrun,
srun or mpirun; standard library and torch only."""
