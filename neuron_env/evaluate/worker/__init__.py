"""The evaluate worker: loads the user's ENTRY and runs their model inside the *target*
interpreter, needing only the standard library and torch there.

neuron-env starts it as ``python -I <this directory>`` (see ``__main__.py``), writes one JSON
request on its stdin and reads JSON lines from its stdout (the self-test worker's protocol,
``selftest/worker/protocol.py``). It reuses the self-test worker's device handling, comparisons and
timing. Importing this package imports nothing but the standard library.
"""
