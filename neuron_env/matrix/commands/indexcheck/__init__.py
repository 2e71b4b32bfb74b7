"""``neuron-env matrix verify``: check a release file against the package indexes themselves.

The layers follow the rest of neuron-env: :mod:`.simple` reads PEP 503/691 "simple" pages over
HTTP (the only network I/O) and :mod:`.wheels` reads wheel file names; :mod:`.compare` (with
:mod:`.glibc` and :mod:`.placeholders`) turns the pages and a release into :class:`.facts.Fact`
values (pure); :mod:`.verify` decides which indexes to read and reads them; :mod:`.overlay`
applies what the indexes showed to a copy of the release and writes it.
"""
