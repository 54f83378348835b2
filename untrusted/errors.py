"""Errors of the ``untrusted`` package.

UntrustedError        base
 └── UnreadableTable  a CSV file that cannot be read as a table (missing, not UTF-8, empty,
                      missing columns); the message is one line naming the file and the row
"""

from __future__ import annotations


class UntrustedError(ValueError):
    pass


class UnreadableTable(UntrustedError):
    pass
