"""Probes: read facts about a host and a target Python environment, never judge them.

Every probe reads through a sysroot (default ``/``), runs with a timeout, and returns data or
raises; the collector records a failure as a :class:`neuron_env.facts.ProbeError`.
"""
