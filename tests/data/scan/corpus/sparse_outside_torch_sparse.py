# Sparse tensors made without naming torch.sparse.
import torch

dense = torch.eye(3)
indices = torch.tensor([[0, 1], [1, 0]])
a = torch.sparse_coo_tensor(indices, torch.ones(2), (2, 2))  # expect: unsupported-apis
b = torch.spmm(a, dense[:2, :2])  # expect: unsupported-apis
c = dense.to_sparse()  # expect: unsupported-apis
d = dense.to_sparse_csr()  # expect: unsupported-apis
layout_is_sparse = a.layout == torch.sparse_coo  # a layout test computes nothing
