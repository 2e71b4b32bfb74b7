"""The evaluate worker: loads the user's ENTRY and runs their model inside the *target*
interpreter, needing only the standard library and torch there.

neuron-env starts it as ``python -I <neuron_env>/worker/target evaluate`` (the one entry of every
worker, ``worker/target/__main__.py``), writes one JSON request on its stdin and reads JSON lines
from its stdout (every worker's protocol, ``worker/target/protocol.py``). It shares the device
handling, comparisons and timing of every worker (``neuron_env/worker/target``). Importing this
package imports nothing but the standard library.
"""
