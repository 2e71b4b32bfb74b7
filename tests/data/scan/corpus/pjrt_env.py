# The Neuron PJRT family set from Python, shaped like multi-node launchers of the XLA line
# (pytorch/xla torch_xla/_internal/neuron.py sets the first two; libneuronxla points
# NEURON_LIBRARY_PATH at libneuronpjrt.so). Written here, not copied.
import os
import subprocess

os.environ["NEURON_PJRT_PROCESS_INDEX"] = str(int(os.environ.get("SLURM_NODEID", "0")))  # expect: xla-pjrt-env
os.environ["NEURON_PJRT_PROCESSES_NUM_DEVICES"] = ",".join(["32"] * 2)  # expect: xla-pjrt-env
os.environ.setdefault("NEURON_LIBRARY_PATH", "/opt/aws/libneuronpjrt.so")  # expect: xla-pjrt-env
os.putenv("NEURON_INTERNAL_PJRT_C_API_VERSION", "0.55")  # expect: xla-pjrt-env
os.environ["NEURON_PT_MPMD_MODE"] = "1"  # expect: xla-era-env
os.environ["NEURON_RT_VISIBLE_CORES"] = "0-31"  # a runtime variable: TorchNeuron reads it too
env = {**os.environ, "PJRT_DEVICE": "NEURON"}  # expect: xla-env
index = os.environ["NEURON_PJRT_PROCESS_INDEX"]  # expect: xla-pjrt-env
print("set NEURON_PJRT_PROCESS_INDEX before launching")  # a message, not the variable
subprocess.run(["neuron_parallel_compile", "torchrun", "--nproc_per_node=32", "train.py"], env=env)  # expect: xla-parallel-compile
