"""The workflows behind the commands: each takes one keyword-only request and returns one result.

A command module under :mod:`neuron_env.cli` parses its options into the request, makes the one
call and emits the result; what is decided (live facts or a snapshot, which levels run) lives here.
"""
