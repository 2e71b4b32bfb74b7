import torch

nt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])  # expect: unsupported-apis
padded = torch.nested.to_padded_tensor(nt, 0.0)  # expect: unsupported-apis
