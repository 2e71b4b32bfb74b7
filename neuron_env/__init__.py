"""neuron-env: provision and validate PyTorch environments for AWS Trainium (TorchNeuron)."""

__version__ = "0.1.0"
