"""The bounded read of Codex's ``agents/openai.yaml`` beside a SKILL.md; what its fields mean is
:func:`skillsd.core.skill.host_fields.host_from_openai`."""

from __future__ import annotations

import os
from typing import Any

import yaml

from skillsd.core import limits
from skillsd.core.fs.bounded_read import read_regular_file
from skillsd.core.skill.frontmatter import FrontmatterError, check_nesting
from skillsd.core.skill.host_fields import (
    OPENAI_YAML,
    HostReading,
    host_from_openai,
    openai_yaml_problem,
)

__all__ = ["read_openai_yaml"]


_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_openai_yaml(skill_dir: str) -> HostReading:
    """Read and interpret ``agents/openai.yaml`` in ``skill_dir`` (nothing if it is absent).

    Only a regular file is opened for reading (checked with ``fstat`` on a non-blocking open, so
    a FIFO never blocks), at most ``MAX_OPENAI_YAML_BYTES``; every problem is a warning.
    """
    path = os.path.join(skill_dir, OPENAI_YAML)
    try:
        read = read_regular_file(path, limits.MAX_OPENAI_YAML_BYTES)
    except FileNotFoundError:
        return HostReading()
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return HostReading(diagnostics=[openai_yaml_problem("openai_yaml.unreadable", path, why)])
    if read.over_cap:
        problem = openai_yaml_problem(
            "openai_yaml.too_large",
            path,
            f"more than {limits.MAX_OPENAI_YAML_BYTES} bytes; at most that many are read",
        )
        return HostReading(diagnostics=[problem])
    data = read.data
    if len(data) > limits.MAX_OPENAI_YAML_BYTES:  # grew since the fstat
        problem = openai_yaml_problem(
            "openai_yaml.too_large", path, f"over {limits.MAX_OPENAI_YAML_BYTES} bytes"
        )
        return HostReading(diagnostics=[problem])
    try:
        text = data.decode("utf-8-sig")
        check_nesting(text)
        document = yaml.load(text, Loader=_SafeLoader)  # a safe loader: plain data only
    except UnicodeDecodeError as exc:
        why = f"not valid UTF-8 (bad byte at offset {exc.start})"
        return HostReading(diagnostics=[openai_yaml_problem("openai_yaml.invalid", path, why)])
    except FrontmatterError as exc:
        why = f"YAML nests deeper than {limits.MAX_YAML_DEPTH} levels"
        if exc.code != "yaml.too_deep":
            why = f"invalid YAML: {exc.message}"
        return HostReading(diagnostics=[openai_yaml_problem("openai_yaml.invalid", path, why)])
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        why = f"invalid YAML: {' '.join(str(exc).split())}"
        return HostReading(diagnostics=[openai_yaml_problem("openai_yaml.invalid", path, why)])
    return host_from_openai(document, path=path, skill_dir=skill_dir)
