import torch
import torch.distributions as D  # expect: unsupported-apis
from torch.distributions import Normal  # expect: unsupported-apis

policy = D.Categorical(logits=torch.zeros(4))  # expect: unsupported-apis
noise = Normal(0.0, 1.0).sample((3,))  # expect: unsupported-apis
