"""neuron-env's side of a worker: a subprocess in the *target* interpreter that reports JSON lines.

The smoke test and self-test (``selftest/``) and ``evaluate`` each run their own worker there;
what they share lives here, so that neither reaches into the other:

* ``results`` — statuses, compared tensors, the device found, a run's problem (plain data);
* ``events`` — the shared events (``hello``, ``fatal``, comparisons) as those models, and the
  one-line text of a comparison;
* ``devices`` — the device names a user may give;
* ``stream`` — reading events against deadlines that only progress moves, bounded in size;
* ``exits`` — how a worker ended, in words (a signal by its name);
* ``interrupts`` — Ctrl-C and SIGTERM: the worker's process group killed, then exit 130.

Nothing here imports torch, the CLI, or either command.
"""
