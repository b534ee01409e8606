"""One skill: SKILL.md parsing, validation, rendering, invocation, files, the scan."""
