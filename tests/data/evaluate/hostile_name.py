"""An entry whose reported name is markup: the HTML report must show it, not run it."""

import torch


def make():
    return {
        "model": torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh()),
        "inputs": torch.randn(3, 4),
        "name": "<script>alert('pwned')</script> & <b>bold</b>",
    }
