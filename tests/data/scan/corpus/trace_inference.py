# Traced inference with torch-neuronx, shaped like aws-neuron/aws-neuron-samples'
# torch-neuronx/inference notebooks (trace, torch.jit.save, then load and run) and the
# tracing API reference (async_load, lazy_load, dynamic_batch). Written here, not copied.
import os

import torch
import torch_neuronx
from torch_neuronx import trace as neuron_trace  # expect: xla-trace
from torch_neuronx.xla_impl import data_parallel  # expect: xla-trace
from transformers import AutoModelForSequenceClassification, AutoTokenizer

os.environ["NEURON_FUSE_SOFTMAX"] = "1"  # expect: xla-era-env


def compile_model(name: str) -> None:
    tokenizer = AutoTokenizer.from_pretrained(name)
    model = AutoModelForSequenceClassification.from_pretrained(name, torchscript=True)
    example = tokenizer("hello", return_tensors="pt", padding="max_length", max_length=128)
    inputs = (example["input_ids"], example["attention_mask"])
    traced = torch_neuronx.trace(model, inputs, compiler_args="--model-type=transformer")  # expect: xla-trace
    torch.jit.save(traced, "model_neuron.pt")  # expect: xla-traced-save
    batched = torch_neuronx.dynamic_batch(traced)  # expect: xla-trace
    torch.jit.save(neuron_trace(model, inputs), "other.pt")  # expect: xla-traced-save, xla-trace
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    torch.jit.save(scripted, "cpu_model.pt")  # a TorchScript module of the CPU: not traced for Neuron
    print(batched, data_parallel)  # expect: xla-trace


def load(path: str) -> torch.nn.Module:
    model = torch.jit.load(path)
    torch_neuronx.async_load(model)  # expect: xla-trace
    torch_neuronx.lazy_load(model)  # expect: xla-trace
    return model


def native(model: torch.nn.Module) -> object:
    # TorchNeuron's own torch_neuronx API: not the XLA line.
    compiled = torch.compile(model, backend="neuron", dynamic=False)
    return compiled, torch_neuronx.get_fallback_ops()
