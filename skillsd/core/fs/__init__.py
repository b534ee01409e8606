"""Filesystem primitives: bounded reads, atomic writes, the boundary, stat keys, walks."""
