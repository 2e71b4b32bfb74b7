# Fine-tuning with optimum-neuron, shaped like huggingface/optimum-neuron's
# examples/training (NeuronTrainer + NeuronTrainingArguments) and its inference docs
# (NeuronModelForCausalLM.from_pretrained(..., export=True)). Written here, not copied.
import torch
from datasets import load_dataset
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments  # expect: xla-library, xla-library
from optimum.neuron import NeuronModelForCausalLM  # expect: xla-library
from optimum.neuron.models.training import NeuronModelForCausalLM as TrainModel  # expect: xla-library
from transformers import AutoTokenizer
import optimum.neuron.distributed  # expect: xla-library
from optimum.onnxruntime import ORTModelForCausalLM  # optimum's ONNX side: not Neuron


def train(model_id: str) -> None:
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    data = load_dataset("databricks/databricks-dolly-15k", split="train")
    args = NeuronTrainingArguments(output_dir="out", bf16=True, tensor_parallel_size=8)
    trainer = NeuronTrainer(model=TrainModel.from_pretrained(model_id), args=args,
                            train_dataset=data, tokenizer=tokenizer)
    trainer.train()


def generate(model_id: str) -> str:
    model = NeuronModelForCausalLM.from_pretrained(model_id, export=True, batch_size=1)
    export = "optimum-cli export neuron --model gpt2 --batch_size 1 out/"  # expect: xla-library
    return str(model) + export
