import torch
import torch.fft as tfft  # expect: fft-subset

x = torch.randn(16)
spectrum = torch.fft.rfft(x)  # expect: fft-subset
back = tfft.irfft(spectrum)  # expect: fft-subset
