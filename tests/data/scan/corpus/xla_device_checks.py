# Tests of the device type that are silently False once tensors live on "neuron".
import torch

x = torch.ones(2)
device_map = "auto"
on_xla = x.device.type == "xla"  # expect: xla-device-comparison
if device_map == "xla":  # expect: xla-device-comparison
    pass
if "xla" != x.device.type:  # expect: xla-device-comparison
    pass
if x.device.type == "cpu" or x.device.type == "neuron":
    pass
name = "xla"
if name == "xla":  # not a device: a name that happens to hold the word
    pass
