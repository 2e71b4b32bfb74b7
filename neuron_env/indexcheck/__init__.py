"""``neuron-env matrix verify``: check a release file against the package indexes themselves.

The layers follow the rest of neuron-env: :mod:`.simple` reads PEP 503/691 "simple" pages over
HTTP (the only I/O), :mod:`.compare` turns the pages and a :class:`~neuron_env.matrix.Release`
into facts (pure), and :mod:`.overlay` applies what the indexes showed to a copy of the release.
"""
