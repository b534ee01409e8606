"""skillsd: a runtime for Agent Skills."""

__version__ = "0.1.0"
