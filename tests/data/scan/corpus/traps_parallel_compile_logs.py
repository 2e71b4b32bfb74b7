"""Log messages that mention neuron_parallel_compile without running it."""

import logging

log = logging.getLogger(__name__)
log.info("Skipping neuron_parallel_compile: the cache is warm")
print("Run neuron_parallel_compile first to fill the cache.")
log.warning("neuron_parallel_compile is not needed on TorchNeuron")
hint = "see the neuron_parallel_compile docs"
