"""Checks: judge host facts against a release of the matrix, never probe.

Each check has a stable id (a public contract), a category, and returns ok / warn / fail / skip /
error with a one-line summary, detail and a fix a person can run.
"""
