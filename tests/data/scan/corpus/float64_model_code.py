# float64 in model and optimizer code, whose tensors live on the device: shaped like the
# RMSNorm upcast, rotary embedding and loss of aws-neuron/neuronx-distributed's
# examples/training/llama/modeling_llama_nxd.py and its AdamW_FP32OptimParams. Written here.
import torch
import torch.nn.functional as F


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.double)  # expect: float64
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return (self.weight * hidden_states * torch.rsqrt(variance + self.eps)).to(dtype)


def rotary(inv_freq: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
    freqs = inv_freq[None, :, None].double() @ position_ids[:, None, :].double()  # expect: float64, float64
    return torch.cat((freqs, freqs), dim=-1).cos()


def router(logits: torch.Tensor, top_k: int) -> torch.Tensor:
    affinities = F.softmax(logits, dim=-1, dtype=torch.float64)  # expect: float64
    return torch.topk(affinities, top_k, dim=1).indices


def adamw_step(params: list[torch.nn.Parameter]) -> None:
    for p in params:
        grad = p.grad.data.double()  # expect: float64
        p.data.add_(grad.to(p.dtype), alpha=-1e-3)
