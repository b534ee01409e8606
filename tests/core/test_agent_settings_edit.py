"""skillsd's own keys in an agent's JSON settings: written beside the user's, taken back
exactly, and a key the user set or changed is never touched."""

from __future__ import annotations

import json

import pytest

from skillsd.core.listing.agent_settings_edit import SettingsError, add_keys, remove_keys

USER = '{\n\t"model": "opus",\n\t"skillOverrides": {\n\t\t"mine": "off"\n\t}\n}'


def test_add_keeps_other_keys_their_order_and_the_indentation() -> None:
    edit = add_keys(USER, "s.json", {"a": "name-only", "mine": "name-only"}, {})
    assert edit.text is not None
    data = json.loads(edit.text)
    assert list(data) == ["model", "skillOverrides"]
    assert data["skillOverrides"] == {"mine": "off", "a": "name-only"}
    assert edit.changed == {"a": "name-only"}
    assert "mine" in edit.left and "'off'" in edit.left["mine"]
    assert '\n\t"model"' in edit.text and not edit.text.endswith("\n")


def test_remove_restores_the_original_bytes() -> None:
    edit = add_keys(USER, "s.json", {"a": "name-only"}, {})
    back = remove_keys(edit.text, "s.json", edit.changed, USER, created=False)
    assert back.text == USER and back.changed == {"a": "name-only"}


def test_a_second_apply_drops_its_old_keys_and_keeps_the_users() -> None:
    first = add_keys(USER, "s.json", {"a": "name-only", "b": "name-only"}, {})
    second = add_keys(first.text, "s.json", {"b": "user-invocable-only"}, first.changed)
    assert second.text is not None
    assert json.loads(second.text)["skillOverrides"] == {"mine": "off", "b": "user-invocable-only"}
    back = remove_keys(second.text, "s.json", second.changed, USER, created=False)
    assert back.text == USER


def test_a_changed_key_is_left_and_other_edits_survive() -> None:
    edit = add_keys(USER, "s.json", {"a": "name-only"}, {})
    assert edit.text is not None
    data = json.loads(edit.text)
    data["skillOverrides"]["a"] = "on"
    data["theme"] = "dark"
    back = remove_keys(json.dumps(data), "s.json", edit.changed, USER, created=False)
    assert back.text is not None and back.changed == {}
    assert json.loads(back.text)["skillOverrides"] == {"mine": "off", "a": "on"}
    assert "a" in back.left


def test_a_file_skillsd_made_goes_away_and_one_the_user_removed_stays_gone() -> None:
    edit = add_keys(None, "s.json", {"a": "off"}, {})
    assert edit.text == '{\n  "skillOverrides": {\n    "a": "off"\n  }\n}\n'
    assert remove_keys(edit.text, "s.json", edit.changed, None, created=True).text is None
    assert remove_keys(None, "s.json", edit.changed, None, created=True).text is None


@pytest.mark.parametrize("text", ["[1]", "{nope", '{"skillOverrides": []}'])
def test_what_is_not_a_settings_object_is_refused(text: str) -> None:
    with pytest.raises(SettingsError, match=r"s\.json"):
        add_keys(text, "s.json", {"a": "off"}, {})
