# The PyTorch/XLA and TPU variables of XLA-era jobs.
import os

os.environ["NEURON_EXTRACT_GRAPHS_ONLY"] = "1"  # expect: xla-env
os.environ["XLA_IR_DEBUG"] = "1"  # expect: xla-env
os.environ["XLA_HLO_DEBUG"] = "1"  # expect: xla-env
os.environ["XLA_DISABLE_FUNCTIONALIZATION"] = "1"  # expect: xla-env
os.environ["XLA_USE_32BIT_LONG"] = "1"  # expect: xla-env
os.environ["TPU_NUM_DEVICES"] = "8"  # expect: xla-env
visible = os.environ.get("TPU_VISIBLE_CHIPS")  # expect: xla-env
os.environ["NEURON_RT_VISIBLE_CORES"] = "0-3"
label = "TPU_ or not"  # not a variable name
