# Tensor- and pipeline-parallel training with NxD Core, shaped like
# aws-neuron/neuronx-distributed's examples/training (parallel_state, ColumnParallelLinear,
# NxDPPModel, the trainer's nxd config). Written here, not copied.
import torch
import torch_xla.core.xla_model as xm  # expect: xla-import
from neuronx_distributed.parallel_layers import parallel_state  # expect: xla-library
from neuronx_distributed.parallel_layers.layers import ColumnParallelLinear, RowParallelLinear  # expect: xla-library, xla-library
from neuronx_distributed.pipeline import NxDPPModel  # expect: xla-library
from neuronx_distributed.trainer import initialize_parallel_model, neuronx_distributed_config  # expect: xla-library, xla-library
import neuronx_distributed as nxd  # expect: xla-library
from neuronx_distributed_training.lightning_modules.model import base  # expect: xla-library
from transformers_neuronx import LlamaForSampling  # expect: xla-library
from neuronx_distributed_inference.models.config import NeuronConfig  # expect: xla-library


class MLP(torch.nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.up = ColumnParallelLinear(hidden, 4 * hidden, gather_output=False)
        self.down = RowParallelLinear(4 * hidden, hidden, input_is_parallel=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.gelu(self.up(x)))


def main() -> None:
    config = neuronx_distributed_config(tensor_parallel_size=8, pipeline_config=None)
    model = initialize_parallel_model(config, lambda: MLP(1024))
    rank = parallel_state.get_tensor_model_parallel_rank()
    print(rank, model, NxDPPModel, nxd, base, LlamaForSampling, NeuronConfig)
    xm.mark_step()  # expect: xla-mark-step
