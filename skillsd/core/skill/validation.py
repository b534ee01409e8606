"""Field rules for SKILL.md frontmatter (docs/conformance.md's table), in strict and lenient modes.

:func:`validate_fields` turns the loaded frontmatter mapping into :class:`SkillFields` plus
diagnostics. Lenient mode demotes exactly three errors to warnings (name/directory mismatch,
over-long name, over-long description); everything else keeps its severity in both modes.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

import msgspec

from skillsd.core import limits
from skillsd.core.policy.permissions import rule_problem
from skillsd.core.skill.host_fields import FRONTMATTER_FIELDS, host_from_frontmatter
from skillsd_protocol import DEFAULT_INVOCATION, Diagnostic, HostFields, Invocation

__all__ = [
    "KNOWN_FIELDS",
    "LENIENT_DEMOTED",
    "Mode",
    "SkillFields",
    "split_allowed_tools",
    "validate_fields",
    "validate_name",
]

Mode = Literal["strict", "lenient"]

#: The fields the Agent Skills specification defines; anything else is an extra field.
KNOWN_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
#: Error codes that lenient mode reports as warnings (the skill still loads).
LENIENT_DEMOTED = frozenset({"name.mismatch", "name.too_long", "description.too_long"})

# The common case: an ASCII name that satisfies every character rule at once.
_SIMPLE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class SkillFields(msgspec.Struct, frozen=True, kw_only=True):
    """The validated frontmatter fields of a skill (``name`` NFKC-normalised and stripped).

    Re-exported by :mod:`skillsd.core.skill.fs_skillfile`, whose contract names it.
    """

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] | None = None
    allowed_tools: list[str] | None = None
    extra_fields: dict[str, Any] | None = None
    #: From the host fields (docs/conformance.md) of the frontmatter, and of ``agents/openai.yaml``
    #: once
    #: :func:`skillsd.core.skill.fs_skillfile.read_skill_file` has read it.
    invocation: Invocation = DEFAULT_INVOCATION
    host: HostFields | None = None


def validate_name(name: str, dir_name: str | None) -> list[tuple[str, str]]:
    """Check an already NFKC-normalised, stripped name; return ``(code, message)`` errors.

    ``dir_name`` is compared after NFKC normalisation; None skips the directory check.
    """
    problems: list[tuple[str, str]] = []
    if not name:
        return [("name.missing", "field 'name' is empty")]
    if len(name) > limits.MAX_NAME_CHARS:
        problems.append(
            (
                "name.too_long",
                f"field 'name' is {len(name)} characters; at most {limits.MAX_NAME_CHARS} allowed",
            )
        )
    if not (name.isascii() and _SIMPLE_NAME.fullmatch(name)):
        if name != name.lower():
            problems.append(("name.not_lowercase", f"field 'name' ({name!r}) must be lowercase"))
        bad = sorted({c for c in name if not (c.isalnum() or c == "-")})
        if bad:
            shown = " ".join(repr(c) for c in bad[:5])
            problems.append(
                (
                    "name.invalid_chars",
                    f"field 'name' ({name!r}) may hold only letters, digits and '-'; found {shown}",
                )
            )
        if name[0] == "-" or name[-1] == "-" or "--" in name:
            problems.append(
                (
                    "name.hyphens",
                    f"field 'name' ({name!r}) must not start or end with '-' or contain '--'",
                )
            )
    if dir_name is not None:
        normalized_dir = dir_name if dir_name.isascii() else unicodedata.normalize("NFKC", dir_name)
        if normalized_dir != name:
            problems.append(
                (
                    "name.mismatch",
                    f"field 'name' ({name!r}) must equal the skill's directory name ({dir_name!r})",
                )
            )
    return problems


def split_allowed_tools(text: str) -> list[str] | None:
    """Split an ``allowed-tools`` string into rules; None if parentheses are unbalanced.

    Rules are separated by whitespace (and, as Claude Code writes them, commas); neither splits
    inside parentheses, so ``Bash(git add:*) Read`` is two rules.
    """
    if "(" not in text and ")" not in text:
        return text.replace(",", " ").split()
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and (char.isspace() or char == ","):
            if current:
                rules.append("".join(current))
                current = []
            continue
        current.append(char)
    if depth != 0:
        return None
    if current:
        rules.append("".join(current))
    return rules


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return "a string"


# Complex by design: the field rules: a branch per field.
def validate_fields(  # noqa: C901
    raw: dict[str, Any], *, path: str | None, dir_name: str | None, mode: Mode = "strict"
) -> tuple[SkillFields | None, list[Diagnostic]]:
    """Apply the skill format's field rules to a loaded frontmatter mapping.

    Returns the fields (None when an error remains in this ``mode``) and every diagnostic found,
    each carrying ``path``.
    """
    diagnostics: list[Diagnostic] = []
    lenient = mode == "lenient"
    failed = False

    def report(code: str, message: str, field: str | None) -> None:
        nonlocal failed
        severity: Literal["error", "warning"] = "error"
        if lenient and code in LENIENT_DEMOTED:
            severity = "warning"
            message += " (accepted in lenient mode)"
        else:
            failed = True
        diagnostics.append(
            Diagnostic(severity=severity, code=code, message=message, field=field, path=path)
        )

    # name
    name = ""
    raw_name = raw.get("name")
    if raw_name is None:
        report("name.missing", "required field 'name' is missing", "name")
    elif not isinstance(raw_name, str):
        report("name.invalid", f"field 'name' must be a string, not {_type_name(raw_name)}", "name")
    else:
        # NFKC never changes ASCII, so skip the call for the common case.
        normalized = raw_name if raw_name.isascii() else unicodedata.normalize("NFKC", raw_name)
        name = normalized.strip()
        for code, message in validate_name(name, dir_name):
            report(code, message, "name")

    # description
    description = ""
    raw_description = raw.get("description")
    if raw_description is None:
        report("description.missing", "required field 'description' is missing", "description")
    elif not isinstance(raw_description, str):
        report(
            "description.invalid",
            f"field 'description' must be a string, not {_type_name(raw_description)}",
            "description",
        )
    else:
        description = raw_description.strip()
        if not description:
            report("description.missing", "field 'description' is empty", "description")
        elif len(raw_description) > limits.MAX_DESCRIPTION_CHARS:
            report(
                "description.too_long",
                f"field 'description' is {len(raw_description)} characters; "
                f"at most {limits.MAX_DESCRIPTION_CHARS} allowed",
                "description",
            )

    # license
    license_: str | None = None
    raw_license = raw.get("license")
    if raw_license is not None:
        if isinstance(raw_license, str):
            license_ = raw_license.strip() or None
        else:
            report(
                "license.invalid",
                f"field 'license' must be a string, not {_type_name(raw_license)}",
                "license",
            )

    # compatibility
    compatibility: str | None = None
    raw_compat = raw.get("compatibility")
    if raw_compat is not None:
        if not isinstance(raw_compat, str):
            report(
                "compatibility.invalid",
                f"field 'compatibility' must be a string, not {_type_name(raw_compat)}",
                "compatibility",
            )
        elif not raw_compat.strip():
            report(
                "compatibility.invalid",
                "field 'compatibility' is empty; omit it or give 1-"
                f"{limits.MAX_COMPATIBILITY_CHARS} characters",
                "compatibility",
            )
        elif len(raw_compat) > limits.MAX_COMPATIBILITY_CHARS:
            report(
                "compatibility.too_long",
                f"field 'compatibility' is {len(raw_compat)} characters; "
                f"at most {limits.MAX_COMPATIBILITY_CHARS} allowed",
                "compatibility",
            )
        else:
            compatibility = raw_compat.strip()

    # metadata
    metadata: dict[str, str] | None = None
    raw_metadata = raw.get("metadata")
    if raw_metadata is not None:
        if not isinstance(raw_metadata, dict):
            report(
                "metadata.invalid",
                f"field 'metadata' must be a mapping of strings, not {_type_name(raw_metadata)}",
                "metadata",
            )
        else:
            nested = [k for k, v in raw_metadata.items() if not isinstance(v, str)]
            if nested:
                keys = ", ".join(repr(k) for k in nested)
                report(
                    "metadata.invalid",
                    f"field 'metadata' must map strings to strings; {keys} "
                    f"{'holds' if len(nested) == 1 else 'hold'} a nested value",
                    "metadata",
                )
            else:
                metadata = raw_metadata

    # allowed-tools
    allowed_tools: list[str] | None = None
    raw_tools = raw.get("allowed-tools")
    if raw_tools is not None:
        if isinstance(raw_tools, str):
            allowed_tools = split_allowed_tools(raw_tools)
            if allowed_tools is None:
                report(
                    "allowed_tools.invalid",
                    f"field 'allowed-tools' has unbalanced parentheses: {raw_tools!r}",
                    "allowed-tools",
                )
        elif isinstance(raw_tools, list) and all(isinstance(t, str) for t in raw_tools):
            allowed_tools = [t.strip() for t in raw_tools if t.strip()]
        else:
            report(
                "allowed_tools.invalid",
                "field 'allowed-tools' must be a space-separated string or a list of strings",
                "allowed-tools",
            )
        for rule in allowed_tools or ():
            problem = rule_problem(rule)
            if problem is not None:
                # The skill stays usable; the malformed rule simply grants nothing.
                diagnostics.append(
                    Diagnostic(
                        severity="warning",
                        code="allowed_tools.bad_rule",
                        message=f"field 'allowed-tools': {problem} (this rule grants nothing)",
                        field="allowed-tools",
                        path=path,
                    )
                )

    # everything else, kept verbatim; the host fields skillsd honours are read too
    # (docs/conformance.md)
    extra: dict[str, Any] | None = None
    invocation, host = DEFAULT_INVOCATION, None
    if not KNOWN_FIELDS.issuperset(raw):
        extra = {k: v for k, v in raw.items() if k not in KNOWN_FIELDS}
        for key in extra:
            if key in FRONTMATTER_FIELDS:
                code = "field.host"
                message = (
                    f"field {key!r} is a Claude Code field: accepted by the catalog (lenient) "
                    "and honoured by skillsd, but not in the open spec"
                )
            else:
                code = "field.unknown"
                message = (
                    f"field {key!r} is not part of the Agent Skills specification "
                    "(kept as an extra field)"
                )
            diagnostics.append(
                Diagnostic(severity="warning", code=code, message=message, field=key, path=path)
            )
        if not FRONTMATTER_FIELDS.keys().isdisjoint(extra):
            reading = host_from_frontmatter(extra, path=path)
            diagnostics += reading.diagnostics
            invocation, host = reading.invocation(), reading.host()

    if failed:
        return None, diagnostics
    return (
        SkillFields(
            name=name,
            description=description,
            license=license_,
            compatibility=compatibility,
            metadata=metadata,
            allowed_tools=allowed_tools,
            extra_fields=extra,
            invocation=invocation,
            host=host,
        ),
        diagnostics,
    )
