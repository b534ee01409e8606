"""Hostile repositories and sources against agents' plugins (docs/agents.md, "Plugins"): a
repository's settings cannot turn on a plugin the user has not enabled, nesting bombs in settings
and marketplace manifests are errors naming the file, and a plugin's skills stay in its folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from skillsd.core.catalog.fs_catalog_build import build_catalog
from skillsd.core.discovery.fs_roots import compute_roots
from skillsd.core.install.fs_install_source import SourceError, find_skills
from tests.support.cli import run_tree_cli
from tests.support.client import Client
from tests.support.skill_tree import write_skill

KEY = "shell@mkt"
#: 200 000 ``[``: far past the interpreter's recursion limit once parsed.
BOMB = "[" * 200_000


def install_plugin(home: Path) -> Path:
    """Claude Code's record of the installed plugin ``shell@mkt``: one skill granting any
    shell command."""
    folder = home / ".claude/plugins/cache/mkt/shell/1.0.0"
    write_skill(folder / "skills", "run", "Runs commands.", extra="allowed-tools: Bash(*)\n")
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin/plugin.json").write_text('{"name": "shell", "version": "1.0.0"}')
    registry = {"version": 2, "plugins": {KEY: [{"installPath": os.fspath(folder)}]}}
    (home / ".claude/plugins/installed_plugins.json").write_text(json.dumps(registry))
    return folder


def settings(folder: Path, text: str | dict[str, Any]) -> Path:
    """Write ``folder/.claude/settings.json``; a dict is ``enabledPlugins``."""
    path = folder / ".claude/settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = text if isinstance(text, str) else json.dumps({"enabledPlugins": text})
    path.write_text(body)
    return path


def plugin_names(listed: dict[str, Any]) -> list[str]:
    return [s["qualifiedName"] for s in listed["skills"] if s["scope"] == "plugin"]


def codes(listed: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [d for d in listed.get("diagnostics", []) if d["code"] == code]


# -- a repository only tightens plugins ------------------------------------------------------


@pytest.mark.parametrize("user_flag", [False, None])
def test_an_untrusted_repository_cannot_enable_a_plugin_the_user_has_not(
    client: Client, tree: dict[str, Path], user_flag: bool | None
) -> None:
    install_plugin(tree["home"])
    if user_flag is not None:
        settings(tree["home"], {KEY: user_flag})
    project_settings = settings(tree["project"], {KEY: True})
    client.ok("session.open", sessionId="s")
    client.raw("skills.load", {"name": "shell:run", "sessionId": "s", "cwd": client.cwd})
    rm = client.ok("permissions.check", tool="Bash", input="rm -rf ~", sessionId="s")
    assert (rm["decision"], rm["layer"]) == ("ask", "default")
    listed = client.ok("skills.list")
    assert plugin_names(listed) == []
    [diag] = codes(listed, "plugin.needs_trust")
    assert diag["path"] == os.fspath(project_settings) and KEY in diag["message"]


def test_a_trusted_repository_enables_it_and_its_grants_follow_trust(
    client: Client, tree: dict[str, Path]
) -> None:
    install_plugin(tree["home"])
    settings(tree["home"], {KEY: False})
    settings(tree["project"], {KEY: True})
    client.ok("session.open", sessionId="s")
    assert plugin_names(client.ok("skills.list")) == []
    client.ok("trust.set", trusted=True)
    listed = client.ok("skills.list")
    assert plugin_names(listed) == ["shell:run"] and not codes(listed, "plugin.needs_trust")
    client.ok("skills.load", name="shell:run", sessionId="s")
    rm = client.ok("permissions.check", tool="Bash", input="rm -rf ~", sessionId="s")
    assert rm["decision"] == "allow" and rm["grantedBy"] == ["run"]
    # Trust revoked: the loaded plugin's grant is withheld as a repo skill's is.
    client.ok("trust.set", trusted=False)
    rm = client.ok("permissions.check", tool="Bash", input="rm -rf ~", sessionId="s")
    assert (rm["decision"], rm["layer"]) == ("ask", "default") and rm["withheldBy"] == ["run"]
    assert plugin_names(client.ok("skills.list")) == []


def test_a_plugin_the_user_enabled_is_theirs_and_a_repository_may_disable_it(
    tree: dict[str, Path],
) -> None:
    install_plugin(tree["home"])
    settings(tree["home"], {KEY: True})
    settings(tree["project"], {KEY: True})
    catalog = build_catalog(
        compute_roots(os.fspath(tree["project"]), home=os.fspath(tree["home"]), env={})
    )
    [skill] = [s for s in catalog.skills if s.scope == "plugin"]
    assert not catalog.grants_need_trust(skill)
    settings(tree["project"], {KEY: False})
    catalog = build_catalog(
        compute_roots(os.fspath(tree["project"]), home=os.fspath(tree["home"]), env={})
    )
    assert not [s for s in catalog.skills if s.scope == "plugin"]


# -- nesting bombs -----------------------------------------------------------------------------


@pytest.mark.process
def test_a_nesting_bomb_in_a_repositorys_settings_is_a_diagnostic(
    client: Client, tree: dict[str, Path]
) -> None:
    install_plugin(tree["home"])
    settings(tree["home"], {KEY: True})
    bomb = settings(tree["project"], BOMB)
    listed = client.ok("skills.list")
    [diag] = codes(listed, "plugin.unreadable")
    assert diag["path"] == os.fspath(bomb) and "nested deeper" in diag["message"]
    assert plugin_names(listed) == ["shell:run"]  # the user's own enabling stands
    shown = run_tree_cli(tree, "list")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert os.fspath(bomb) in shown.stdout


@pytest.mark.process
def test_a_nesting_bomb_in_a_marketplace_manifest_is_an_error_naming_it(
    tree: dict[str, Path],
) -> None:
    source = tree["tmp"] / "market"
    write_skill(source / "skills", "alpha", "Alpha.")
    manifest = source / ".claude-plugin/marketplace.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(BOMB)
    with pytest.raises(SourceError, match=r"marketplace\.json: not usable JSON"):
        find_skills(os.fspath(source))
    added = run_tree_cli(tree, "add", os.fspath(source))
    assert added.returncode == 2 and "Traceback" not in added.stderr, added.stderr
    assert ".claude-plugin/marketplace.json: not usable JSON" in added.stderr


# -- a plugin's skills stay in its folder ------------------------------------------------------


def test_a_plugin_skills_link_leaving_the_plugin_is_not_read(
    client: Client, tree: dict[str, Path]
) -> None:
    folder = install_plugin(tree["home"])
    settings(tree["home"], {KEY: True})
    outside = tree["tmp"] / "outside"
    write_skill(outside / "skills", "leak", "Leaks.")
    (outside / "skills/leak/secret.txt").write_text("top secret")
    write_skill(outside, "lone", "Leaks too.")
    (outside / "lone/secret.txt").write_text("top secret")
    write_skill(folder / "extra", "fine", "Inside the plugin.")
    # A skill folder inside skills/ linking out, and one linking elsewhere inside the plugin.
    (folder / "skills/lone").symlink_to(outside / "lone")
    (folder / "skills/fine").symlink_to(folder / "extra/fine")
    # A SKILL.md linking out of the plugin.
    (folder / "skills/borrowed").mkdir()
    (folder / "skills/borrowed/SKILL.md").symlink_to(outside / "lone/SKILL.md")
    listed = client.ok("skills.list")
    assert plugin_names(listed) == ["shell:fine", "shell:run"]
    outside_paths = {d["path"] for d in codes(listed, "plugin.outside")}
    assert outside_paths == {
        os.fspath(folder / "skills/lone"),
        os.fspath(folder / "skills/borrowed/SKILL.md"),
    }
    error = client.err("skills.readFile", name="shell:lone", file="secret.txt")
    assert "top secret" not in json.dumps(error)

    # The whole skills/ folder a link out of the plugin.
    real_skills = folder / "skills"
    real_skills.rename(folder / "old-skills")
    (folder / "skills").symlink_to(outside / "skills")
    listed = client.ok("skills.list", forceReload=True)
    assert plugin_names(listed) == []
    [diag] = codes(listed, "plugin.outside")
    assert diag["path"] == os.fspath(folder / "skills")
    error = client.err("skills.readFile", name="shell:leak", file="secret.txt")
    assert "top secret" not in json.dumps(error)
