"""What a tenant may be called: one rule for the admin API and the CLI alike."""

from __future__ import annotations

import re

TENANT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
TENANT_NAME_MAX = 128
_NAME = re.compile(TENANT_NAME_PATTERN)


def tenant_name_problem(name: str) -> str | None:
    """Why `name` cannot be a tenant's name, or None when it can."""
    if not 1 <= len(name) <= TENANT_NAME_MAX:
        return f"a tenant name is 1 to {TENANT_NAME_MAX} characters"
    if not _NAME.fullmatch(name):
        return ("a tenant name starts with a letter or digit and holds only letters, digits, "
                "'.', '_' and '-'")
    return None
