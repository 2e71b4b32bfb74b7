import torch
import torch as T
import torch.sparse  # expect: unsupported-apis
from torch import sparse as sp  # expect: unsupported-apis

a = torch.randn(4, 4)
s1 = torch.sparse.mm(a, a)  # expect: unsupported-apis
s2 = T.sparse.sum(a)  # expect: unsupported-apis
s3 = sp.softmax(a, 0)  # expect: unsupported-apis
