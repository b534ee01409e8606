"""Workspace trust in the pure policy (docs/permissions.md): origins and trust are inputs to
``evaluate``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import layer_configs, parse_config_text
from skillsd.core.policy.fs_state import StateStore
from skillsd.core.policy.permissions import (
    PermissionsConfig,
    Policy,
    evaluate,
    parse_rule,
    remember_rule,
)
from skillsd.core.policy.trust import TrustConfig, resolve_trust, root_pattern_matches

HOSTILE = PermissionsConfig(
    override=("Bash(curl:*)", "skill_load(gamma)"),
    allow=("Write",),
    default_action="allow",
)
USER = PermissionsConfig(deny=("Bash(curl:*)", "skill_load(gamma)"))


def test_a_project_never_loosens_the_user_config_trusted_or_not() -> None:
    policy = Policy.from_config(USER, HOSTILE)
    for trusted in (False, True):
        check = evaluate(policy, "Bash", "curl evil.sh", trusted=trusted)
        assert (check.decision, check.layer, check.rule) == ("deny", "deny", "Bash(curl:*)")
        assert evaluate(policy, "skill_load", "gamma", trusted=trusted).decision == "deny"
        # The looser defaultAction is ignored: the user's default (ask) holds.
        assert evaluate(policy, "Edit", "/etc/passwd", trusted=trusted).decision == "ask"
    # Its allow rules count once the repository is trusted, and only then.
    assert evaluate(policy, "Write", "/etc/passwd", trusted=False).decision == "ask"
    assert evaluate(policy, "Write", "/etc/passwd", trusted=True).layer == "allow"


def test_a_project_tightens_with_deny_final_deny_and_a_stricter_default() -> None:
    project = PermissionsConfig(final_deny=("Bash(rm:*)",), deny=("Read",), default_action="deny")
    policy = Policy.from_config(PermissionsConfig(allow=("Read",), default_action="allow"), project)
    assert evaluate(policy, "Bash", "rm -rf /", always={"Bash": "allow"}).layer == "finalDeny"
    assert evaluate(policy, "Read", "x").decision == "deny"
    assert (evaluate(policy, "Grep").decision, evaluate(policy, "Grep").layer) == (
        "deny",
        "default",
    )


def test_ignored_project_entries_say_whether_trust_would_apply_them() -> None:
    policy = Policy.from_config(USER, HOSTILE)
    untrusted = {(i.rule, i.key, i.until_trusted) for i in policy.ignored_now(False)}
    assert untrusted == {
        ("Write", "permissions.allow", True),
        ("Bash(curl:*)", "permissions.override", False),
        ("skill_load(gamma)", "permissions.override", False),
        ("defaultAction = 'allow'", "permissions", False),
    }
    assert {i.rule for i in policy.ignored_now(True)} == untrusted_rules_never(policy)


def untrusted_rules_never(policy: Policy) -> set[str]:
    return {i.rule for i in policy.ignored if not i.until_trusted}


def test_withheld_grants_allow_nothing_and_are_named_when_they_would_have_matched() -> None:
    policy = Policy()
    check = evaluate(policy, "Bash", "ls", withheld_grants={"Bash(*)": ["evil"]})
    assert (check.decision, check.layer, check.withheld_by) == ("ask", "default", ("evil",))
    assert evaluate(policy, "Read", withheld_grants={"Bash(*)": ["evil"]}).withheld_by is None
    granted = evaluate(policy, "Bash", "ls", grants={"Bash(*)": ["mine"]})
    assert (granted.decision, granted.granted_by) == ("allow", ("mine",))


def test_remembered_rules_are_reported_as_written() -> None:
    check = evaluate(Policy(), "bash", "curl x", always={"Bash(curl:*)": "deny"})
    assert (check.layer, check.rule) == ("memory", "Bash(curl:*)")
    memory: dict[str, str] = {"bash(curl:*)": "allow"}
    remember_rule(memory, parse_rule("BASH(curl:*)"), "deny")
    assert memory == {"BASH(curl:*)": "deny"}


def test_layering_keeps_the_project_permissions_apart_and_drops_its_trust(tmp_path: Path) -> None:
    user = parse_config_text('[permissions]\ndefaultAction = "deny"\n', "user.toml")
    project_path = os.fspath(tmp_path / ".agents" / "skillsd.toml")
    project = parse_config_text(
        '[permissions]\nallow = ["Read"]\n[trust]\ndefault = "trusted"\n', project_path
    )
    config = layer_configs([("user.toml", user), (project_path, project)])
    project_permissions = config.project_permissions
    assert project_permissions is not None
    assert config.permissions.allow == () and project_permissions.allow == ("Read",)
    # No defaultAction in the project: it has no opinion (the user's value, not "ask").
    assert project_permissions.default_action == "deny"
    alone = layer_configs([("user.toml", user)])
    assert alone.project_permissions is None
    assert Policy.from_config(alone.permissions, alone.project_permissions).default_action == "deny"
    assert config.trust == TrustConfig()
    # A file cannot write what only layering sets: the key is unknown there, and ignored.
    written = layer_configs(
        [("user.toml", parse_config_text('[projectPermissions]\nallow = ["Read"]\n', "user.toml"))]
    )
    assert written.project_permissions is None
    assert "`projectPermissions.allow` is not a setting" in written.unknown_keys[0][1]


@pytest.mark.parametrize(
    ("text", "key"),
    [('[trust]\ndefault = "yes"\n', "trust.default"), ("[trust]\nroots = 3\n", "trust.roots")],
)
def test_an_invalid_trust_value_names_the_key(text: str, key: str) -> None:
    with pytest.raises(SkillsdError) as info:
        parse_config_text(text, "config.toml")
    assert f"key '{key}'" in info.value.message


def test_trust_comes_from_the_state_then_config_roots_then_default(tmp_path: Path) -> None:
    home = os.fspath(tmp_path)
    (tmp_path / "src" / "mine").mkdir(parents=True)
    root = os.fspath((tmp_path / "src" / "mine").resolve())
    config = TrustConfig(roots=("~/src/*",))
    assert resolve_trust(root, {}, config, home=home).source == "config"
    assert resolve_trust(root, {root: False}, config, home=home).trusted is False
    plain = resolve_trust(root, {}, TrustConfig(), home=home)
    assert (plain.trusted, plain.source) == (False, "default")
    assert resolve_trust(root, {}, TrustConfig(default="trusted"), home=home).trusted
    assert root_pattern_matches(root, "~/src/mine", home=home)
    assert not root_pattern_matches(root, "~/src/other", home=home)
    assert not root_pattern_matches(root, "src/mine", home=home)


def test_trust_decisions_persist_beside_the_other_state(tmp_path: Path) -> None:
    path = os.fspath(tmp_path / "state.json")
    StateStore(path).set_trust("/repo", True)
    StateStore(path).remember("Bash(curl:*)", "deny")
    store = StateStore(path)
    assert store.trust_decisions() == {"/repo": True}
    assert store.always() == {"Bash(curl:*)": "deny"}
    store.set_trust("/repo", False)
    assert StateStore(path).trust_decisions() == {"/repo": False}
