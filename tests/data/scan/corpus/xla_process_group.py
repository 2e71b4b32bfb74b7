# A data-parallel job as the XLA-era samples start it: the "xla" backend and the PJRT rendezvous.
import torch.distributed as dist
import torch_xla.distributed.xla_backend  # expect: xla-import
from torch.distributed import init_process_group

dist.init_process_group("xla")  # expect: xla-process-group
dist.init_process_group(backend="xla", init_method="xla://")  # expect: xla-process-group, xla-init-method
init_process_group("xla", "pjrt://")  # expect: xla-process-group, xla-init-method
group = dist.new_group(backend="xla")  # expect: xla-process-group

dist.init_process_group(backend="neuron", init_method="env://")
dist.init_process_group("gloo")
backend = "xla"  # a plain string, not (yet) a backend argument
