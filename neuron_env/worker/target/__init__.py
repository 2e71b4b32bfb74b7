"""The part of every worker that runs in the *target* interpreter: the standard library and torch
only (neuron-env's own dependencies may be absent there).

Both workers (``selftest/worker``, ``evaluate/worker``) reach it by relative imports: the one entry
of every worker (``__main__.py`` here, ``python -I <this directory> JOB``) loads ``neuron_env``
under a private root whose parent packages are empty shells, so
no ``__init__`` that imports neuron-env's dependencies ever runs in the target.

* ``protocol`` — the JSON-lines channel (``hello``, ``fatal``, ``start``/``result``, ``done``);
* ``device`` — the device under test, described for ``hello``;
* ``compare`` — a device tensor against the CPU reference, and the verdict over them;
* ``timing`` — first call apart from the steady state;
* ``errors`` — what went wrong, in one line (torch missing, an exception's root cause).

Importing this package imports nothing.
"""
