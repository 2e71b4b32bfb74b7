import os
import subprocess

os.environ["XLA_DOWNCAST_BF16"] = "1"  # expect: xla-env
use_bf16 = os.getenv("XLA_USE_BF16", "0") == "1"  # expect: xla-env
env = {**os.environ, "PJRT_DEVICE": "NEURON", "XLA_FLAGS": "--xla_dump_to=/tmp"}  # expect: xla-env, xla-env

subprocess.run(["neuron_parallel_compile", "torchrun", "train.py"], check=True)  # expect: xla-parallel-compile
os.system("neuron_parallel_compile python train.py")  # expect: xla-parallel-compile

# Not the tool: a longer identifier, and the name only inside a comment: neuron_parallel_compile
flag = "use_neuron_parallel_compile_cache"
