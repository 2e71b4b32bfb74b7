"""The self-test worker: runs inside the *target* interpreter, needing only the standard library
and torch (neuron-env's own dependencies may be absent there).

neuron-env starts it as ``python -I <neuron_env>/worker/target selftest`` (the one entry of every
worker, ``worker/target/__main__.py``), writes one JSON request on its stdin and reads JSON lines
from its stdout (``neuron_env/worker/target/protocol.py``, shared with the evaluate worker).
Importing this package imports nothing but the standard library; torch is imported by the modules
that run cases.
"""
