"""Taking the process's stdin and stdout for a protocol spoken over them."""

from __future__ import annotations

import os
import sys

__all__ = ["claim_stdio"]


def claim_stdio() -> tuple[int, int]:
    """Take stdin/stdout for the protocol; return the private (input, output) descriptors."""
    sys.stdout.flush()
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return in_fd, out_fd
