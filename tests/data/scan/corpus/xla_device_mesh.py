# Device meshes built on the XLA device type.
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh

mesh = init_device_mesh("xla", (2, 4))  # expect: xla-device-string
mesh2 = DeviceMesh("xla", [[0, 1], [2, 3]])  # expect: xla-device-string
mesh3 = init_device_mesh(device_type="xla", mesh_shape=(8,))  # expect: xla-device-string
fine = init_device_mesh("neuron", (8,))
