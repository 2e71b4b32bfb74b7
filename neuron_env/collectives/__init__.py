"""``neuron-env collectives``: all-reduce, all-gather, reduce-scatter, all-to-all and broadcast
over a size sweep, checked against a CPU golden, with nccl-tests' algbw and busbw.

``worker/`` runs on every rank in the target interpreter (standard library and torch only) and
reports JSON lines; ``launch.py`` reads the launcher's variables and starts it (directly, or
through torchrun on one host); ``figures.py`` turns the ranks' records into the report.
"""
