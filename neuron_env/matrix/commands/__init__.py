"""The matrix command: list, show, resolve, diff, validate, verify (its CLI is matrix/cli.py)."""
