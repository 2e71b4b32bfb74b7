"""neuron-env's side of a worker: a subprocess in the *target* interpreter that reports JSON lines.

The self-test (and smoke test) and ``evaluate`` each run their own worker there; what they share
lives here: reading its events against deadlines and size limits (``stream``), and what an
interrupt does to it (``interrupts``). Nothing here imports torch, the CLI, or either command.
"""
