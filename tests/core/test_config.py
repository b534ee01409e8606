from __future__ import annotations

from pathlib import Path

import pytest

from skillsd.core.errors import SkillsdError
from skillsd.core.policy.config import (
    DEFAULT_CONFIG,
    Config,
    parse_config_text,
    project_config_path,
    user_config_path,
)
from skillsd.core.policy.fs_effective_config import load_config


def test_defaults_match_the_spec() -> None:
    c = DEFAULT_CONFIG
    assert c.validation == "lenient" and c.discovery.auto and c.discovery.compat_roots
    assert c.discovery.markers == (".git", ".jj", ".hg")
    assert (c.discovery.max_depth, c.discovery.max_dirs) == (6, 2000)
    assert (c.prompt.max_entries, c.prompt.max_bytes, c.prompt.format) == (200, 32768, "xml")
    assert (c.search.default_limit, c.search.max_limit) == (8, 50)
    assert c.permissions.default_action == "ask"
    assert hash(c) == hash(Config())  # usable as a cache key


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[discovery]\nmaxDepth = 'deep'", "key 'discovery.maxDepth': Expected `int`, got `str`"),
        (
            'validation = "loose"',
            "key 'validation': Invalid enum value 'loose' (allowed: \"strict\"",
        ),
        ("[discovery]\nmaxDepth = 5000", "(allowed: integer, 0 to 1000)"),
        ("[permissions]\ndefaultAction = 'maybe'", "key 'permissions.defaultAction'"),
        ("[roots]\nextra = 'not-a-list'", "key 'roots.extra'"),
        ("not toml = = 1", "invalid TOML"),
    ],
)
def test_invalid_config_names_file_key_and_reason(text: str, fragment: str) -> None:
    with pytest.raises(SkillsdError) as info:
        parse_config_text(text, "/etc/skillsd/config.toml")
    assert info.value.message.startswith("/etc/skillsd/config.toml: ")
    assert fragment in info.value.message


def test_an_unknown_key_is_a_warning_naming_the_closest_setting(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('[promt]\nmaxBytes = 100\n[prompt]\nformat = "markdown"\nbogusKeyXyz = 1\n')
    config, sources = load_config([str(user)])
    # The rest of the file is in effect; only the unknown keys are left out.
    assert sources == [str(user)] and config.prompt.format == "markdown"
    assert config.prompt.max_bytes == DEFAULT_CONFIG.prompt.max_bytes
    assert config.unknown_keys == (
        (str(user), "`promt.maxBytes` is not a setting; did you mean `prompt.maxBytes`?"),
        (str(user), "`prompt.bogusKeyXyz` is not a setting (ignored)"),
    )


def test_the_keys_only_layering_writes_are_unknown_in_a_file() -> None:
    table = parse_config_text('unknownKeys = ["x"]\n[projectPermissions]\nallow = ["Read"]\n', "c")
    assert table == {
        "unknownKeys": [
            ("c", "`unknownKeys` is not a setting (ignored)"),
            ("c", "`projectPermissions.allow` is not a setting; did you mean `permissions.allow`?"),
        ]
    }


def test_layering_project_over_user_and_rule_lists_add_up(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text(
        'validation = "lenient"\n[permissions]\nallow = ["Read"]\n[prompt]\nmaxBytes = 100\n'
    )
    project = tmp_path / "repo" / ".agents" / "skillsd.toml"
    project.parent.mkdir(parents=True)
    project.write_text('[permissions]\nallow = ["skill_load"]\n[prompt]\nmaxBytes = 200\n')
    config, sources = load_config([str(user), project_config_path(str(tmp_path / "repo"))])
    assert sources == [str(user), str(project)]
    assert config.validation == "lenient"
    # The project's permissions keep their origin (docs/permissions.md): the policy decides what
    # they add.
    assert config.permissions.allow == ("Read",)
    assert config.project_permissions is not None
    assert config.project_permissions.allow == ("skill_load",)
    assert config.prompt.max_bytes == 200


def test_missing_files_mean_defaults(tmp_path: Path) -> None:
    assert load_config([str(tmp_path / "none.toml")]) == (DEFAULT_CONFIG, [])


def test_unreadable_file_is_an_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "config.toml"
    bad.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(SkillsdError, match=r"config\.toml: cannot read config"):
        load_config([str(bad)])


def test_user_config_path_honours_env() -> None:
    assert user_config_path({"SKILLSD_CONFIG": "/x/c.toml"}) == "/x/c.toml"
    assert user_config_path({}).endswith("skillsd/config.toml")
