"""Reading what python-hcl2 parses (the Packer recipes) as plain Python values."""

from __future__ import annotations

import json
from typing import Any


def unquoted(value: Any) -> Any:
    """python-hcl2 keeps string literals quoted and marks blocks; plain Python values instead."""
    if isinstance(value, dict):
        return {unquoted(k): unquoted(v) for k, v in value.items() if k != "__is_block__"}
    if isinstance(value, list):
        return [unquoted(v) for v in value]
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        return json.loads(value)
    return value
