"""Every skill, session and tool method through a real ``skillsd serve`` on stdio pipes."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from tests.support.client import Client
from tests.support.skill_tree import write_skill


def names(skills: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(s["name"], s["scope"]) for s in skills]


def test_list_shows_scopes_errors_and_collisions(client: Client, tree: dict[str, Path]) -> None:
    result = client.ok("skills.list")
    assert result["root"] == os.fspath(tree["project"]) and result["generation"] == 1
    assert names(result["skills"]) == [
        ("pdf-forms", "repo"),
        ("release-notes", "repo"),
        ("commit-message", "user"),
        ("release-notes", "user"),
    ]
    repo_rn, user_rn = result["skills"][1], result["skills"][3]
    assert repo_rn["sameName"] == [user_rn["id"]] and user_rn["sameName"] == [repo_rn["id"]]
    pdf = result["skills"][0]
    assert pdf["resources"] == {"scripts": 1, "references": 1, "assets": 1, "other": 1}
    assert pdf["allowedTools"] == ["Read", "Bash(python:*)"] and pdf["enabled"] is True
    assert [e["path"] for e in result["errors"]] == [
        os.fspath(tree["skills"] / "broken" / "SKILL.md")
    ]
    assert {d["code"] for d in result["errors"][0]["diagnostics"]} >= {"description.missing"}
    user_only = client.ok("skills.list", scope="user")
    assert names(user_only["skills"]) == [("commit-message", "user"), ("release-notes", "user")]


def test_search_reasons_filters_and_limits(client: Client, tree: dict[str, Path]) -> None:
    exact = client.ok("skills.search", query="pdf-forms")
    assert exact["results"][0]["reason"] == "exact_name"
    by_path = client.ok("skills.search", query=os.fspath(tree["pdf"]))
    assert by_path["results"][0]["reason"] == "exact_path"
    prefix = client.ok("skills.search", query="commit")
    assert [(h["skill"]["name"], h["reason"]) for h in prefix["results"]] == [
        ("commit-message", "prefix")
    ]
    relevance = client.ok("skills.search", query="fill forms")
    assert relevance["results"][0]["skill"]["name"] == "pdf-forms"
    assert relevance["results"][0]["reason"] == "token_overlap"
    typo = client.ok("skills.search", query="relase")
    assert {h["skill"]["name"] for h in typo["results"]} == {"release-notes"}
    tagged = client.ok("skills.search", query="forms", tags=[" PDF "])
    assert [h["skill"]["name"] for h in tagged["results"]] == ["pdf-forms"]
    limited = client.ok("skills.search", query="release notes", limit=1)
    assert len(limited["results"]) == 1 and limited["count"] == 2 and limited["truncated"]


def test_load_resolution_and_errors(client: Client, tree: dict[str, Path]) -> None:
    by_name = client.ok("skills.load", name="pdf-forms")
    assert by_name["alreadyLoaded"] is False
    assert by_name["body"] == "\n# PDF\nRun scripts/fill.py.\n"
    assert by_name["files"] == [
        "assets/logo.bin",
        "references/fields.md",
        "scripts/fill.py",
    ]  # escape.txt points outside the skill: omitted
    assert by_name["content"].startswith('<skill_context name="pdf-forms"')
    assert "Base directory: file://" in by_name["content"]
    by_path = client.ok("skills.load", path=os.fspath(tree["pdf"] / "SKILL.md"), format="spec")
    assert by_path["content"].startswith('<skill_content name="pdf-forms">')
    by_id = client.ok("skills.load", id=by_name["skill"]["id"], format="markdown")
    assert by_id["content"].startswith("# Skill Activated: pdf-forms")
    ambiguous = client.err("skills.load", name="release-notes")
    assert ambiguous["code"] == 1002 and ambiguous["data"]["kind"] == "ambiguous_skill"
    assert sorted(c["scope"] for c in ambiguous["data"]["candidates"]) == ["repo", "user"]
    missing = client.err("skills.load", name="pdf-form")
    assert missing["code"] == 1001 and missing["data"]["kind"] == "skill_not_found"
    assert "pdf-forms" in missing["data"]["suggestions"]
    no_ref = client.err("skills.load")
    assert no_ref["code"] == -32602 and "path" in no_ref["message"]


def test_reload_suppression_change_and_compaction(client: Client, tree: dict[str, Path]) -> None:
    session = client.ok("session.open", sessionId="conv-1")
    assert session == {"sessionId": "conv-1", "cwd": os.fspath(tree["project"]), "resumed": False}
    first = client.ok("skills.load", name="commit-message", sessionId="conv-1")
    again = client.ok("skills.load", name="commit-message", sessionId="conv-1")
    assert again["alreadyLoaded"] is True and again["body"] == ""
    assert again["content"].startswith("<skill_context_reminder")
    forced = client.ok("skills.load", name="commit-message", sessionId="conv-1", force=True)
    assert forced["alreadyLoaded"] is False and forced["body"] == first["body"]
    # An edit is re-sent (the watcher refreshes the catalog's mtime).
    client.ok("skills.list")  # subscribe to skills.changed
    client.ok("context.inspect")  # answered once the catalog's watches are set up
    skill_md = tree["home"] / ".agents" / "skills" / "commit-message" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nNew step.\n")
    assert client.wait_note("skills.changed")["params"]["changed"]
    changed = client.ok("skills.load", name="commit-message", sessionId="conv-1")
    assert changed["alreadyLoaded"] is False and "New step." in changed["body"]
    # Compaction forgets what is not retained; what is retained stays suppressed.
    pdf_id = client.ok("skills.load", name="pdf-forms", sessionId="conv-1")["skill"]["id"]
    commit_id = changed["skill"]["id"]
    compacted = client.ok("session.compacted", sessionId="conv-1", retain=[pdf_id])
    assert compacted["forgotten"] == [commit_id]
    assert client.ok("skills.load", name="pdf-forms", sessionId="conv-1")["alreadyLoaded"] is True
    reloaded = client.ok("skills.load", name="commit-message", sessionId="conv-1")
    assert reloaded["alreadyLoaded"] is False and "New step." in reloaded["body"]
    resumed = client.ok("session.open", sessionId="conv-1")
    assert resumed["resumed"] is True


def test_unload_revokes_grants_and_inspect_shows_them(client: Client) -> None:
    client.ok("trust.set", trusted=True)  # else the repo skill's grants are withheld
    sid = client.ok("session.open")["sessionId"]
    client.ok("skills.load", name="pdf-forms", sessionId=sid)
    inspect = client.ok("context.inspect", sessionId=sid, includeSkills=True)
    assert inspect["session"]["loaded"][0]["name"] == "pdf-forms"
    assert {g["rule"]: g["grantedBy"] for g in inspect["session"]["grants"]} == {
        "Read": ["pdf-forms"],
        "Bash(python:*)": ["pdf-forms"],
    }
    assert inspect["skills"]["watch"]["mode"] == "watching"
    assert len(inspect["skills"]["skills"]) == 4
    unloaded = client.ok("skills.unload", name="pdf-forms", sessionId=sid)
    assert unloaded == {"unloaded": True, "revokedRules": ["Read", "Bash(python:*)"]}
    assert client.ok("skills.unload", name="pdf-forms", sessionId=sid)["unloaded"] is False


def test_unknown_session_is_an_error_everywhere_but_open(client: Client) -> None:
    for method, params in [
        ("skills.load", {"name": "pdf-forms"}),
        ("skills.list", {}),
        ("skills.search", {"query": "pdf"}),
        ("skills.prompt", {}),
        ("skills.mentions", {"text": "$pdf-forms"}),
        ("skills.unload", {"name": "pdf-forms"}),
        ("skills.readFile", {"name": "pdf-forms", "file": "references/fields.md"}),
        ("skills.setEnabled", {"name": "pdf-forms", "enabled": False, "persist": "session"}),
        ("context.inspect", {}),
        ("permissions.check", {"tool": "Read"}),
        ("session.compacted", {}),
        ("session.close", {}),
    ]:
        error = client.err(method, sessionId="ghost", **params)
        assert error["code"] == 1009 and error["data"]["kind"] == "session_not_found", method


def test_read_file_refusals_paging_and_binary(client: Client, tree: dict[str, Path]) -> None:
    text = client.ok("skills.readFile", name="pdf-forms", file="references/fields.md")
    assert text["encoding"] == "utf-8" and text["content"] == "# Fields\nf1: name\n"
    assert text["path"] == os.fspath(tree["pdf"] / "references" / "fields.md")
    page = client.ok("skills.readFile", name="pdf-forms", file="references/fields.md", length=4)
    assert page["content"] == "# Fi" and page["truncated"] is True
    rest = client.ok("skills.readFile", name="pdf-forms", file="references/fields.md", offset=4)
    assert rest["content"] == "elds\nf1: name\n" and rest["truncated"] is False
    binary = client.ok("skills.readFile", name="pdf-forms", file="assets/logo.bin")
    assert binary["encoding"] == "base64" and base64.b64decode(binary["content"]) == bytes(
        range(256)
    )
    for bad in [
        "/etc/passwd",
        "../release/release-notes/SKILL.md",
        "references/../../x",
        "references\\fields.md",
        "escape.txt",
        "references",
    ]:
        error = client.err("skills.readFile", name="pdf-forms", file=bad)
        assert error["code"] == 1006 and error["data"]["kind"] == "path_not_allowed", bad
    # A NUL cannot be in any file name: refused at the protocol boundary (docs/security.md).
    nul = client.err("skills.readFile", name="pdf-forms", file="refer\x00ences")
    assert nul["code"] == -32602 and "$.file" in nul["message"]
    missing = client.err("skills.readFile", name="pdf-forms", file="references/none.md")
    assert missing["code"] == 1007 and missing["data"]["kind"] == "resource_not_found"


def test_validate(client: Client, tree: dict[str, Path]) -> None:
    good = client.ok("skills.validate", path=os.fspath(tree["pdf"]))
    assert good["valid"] is True and good["skill"]["name"] == "pdf-forms"
    bad = client.ok("skills.validate", path=os.fspath(tree["skills"] / "broken" / "SKILL.md"))
    assert bad["valid"] is False and "skill" not in bad
    assert {d["code"] for d in bad["diagnostics"]} >= {"description.missing", "name.mismatch"}
    lenient = client.ok(
        "skills.validate", path=os.fspath(tree["skills"] / "broken"), mode="lenient"
    )
    assert lenient["valid"] is False  # a missing description still excludes it
    nowhere = client.err("skills.validate", path=os.fspath(tree["tmp"] / "nope"))
    assert nowhere["data"]["kind"] == "skill_not_found" and "nope" in nowhere["message"]


def test_prompt_formats_budget_and_active(client: Client) -> None:
    xml = client.ok("skills.prompt")
    assert xml["text"].startswith("<available_skills>") and xml["shown"] == xml["total"] == 4
    assert xml["bytes"] == len(xml["text"].encode())
    codelia = client.ok("skills.prompt", format="codelia", includeLocation=False)
    assert codelia["text"].startswith("<skills_context>") and "SKILL.md" not in codelia["text"]
    tight = client.ok("skills.prompt", maxBytes=400)
    assert tight["truncated"] is True and tight["bytes"] <= 400 and "skill_search" in tight["text"]
    sid = client.ok("session.open")["sessionId"]
    client.ok("skills.load", name="pdf-forms", sessionId=sid)
    active = client.ok("skills.prompt", sessionId=sid, active=True)
    assert "Run scripts/fill.py." in active["text"] and active["shown"] == 1
    needs_session = client.err("skills.prompt", active=True)
    assert needs_session["code"] == -32602


def test_mentions(client: Client, tree: dict[str, Path]) -> None:
    text = f"Use $pdf-forms and [$x]({tree['pdf'] / 'SKILL.md'}) but not $HOME or $release-notes"
    result = client.ok("skills.mentions", text=text)
    by_text = {m["text"]: m for m in result["mentions"]}
    assert by_text["$pdf-forms"]["skill"]["name"] == "pdf-forms"
    assert text[by_text["$pdf-forms"]["start"] : by_text["$pdf-forms"]["end"]] == "$pdf-forms"
    assert by_text[f"[$x]({tree['pdf'] / 'SKILL.md'})"]["skill"]["name"] == "pdf-forms"
    assert by_text["$release-notes"]["error"]["kind"] == "ambiguous_skill"
    assert "$HOME" not in by_text
    assert result["hint"].startswith("<skill_mentions>") and result["hint"].count("pdf-forms:") == 1


def test_tools_list_and_call(client: Client) -> None:
    tools = client.ok("tools.list")["tools"]
    assert [t["name"] for t in tools] == ["skill_search", "skill_load", "skill_read_file"]
    assert [t["name"] for t in client.ok("tools.list", style="tavernkit")["tools"]] == [
        "skills_list",
        "skills_load",
        "skills_read_file",
    ]
    found = client.ok("tools.call", name="skill_search", arguments={"query": "pdf"})
    assert found["isError"] is False and "pdf-forms" in found["content"]
    loaded = client.ok("tools.call", name="skill_load", arguments={"name": "pdf-forms"})
    assert loaded["isError"] is False and "Run scripts/fill.py." in loaded["content"]
    read = client.ok(
        "tools.call",
        name="skills_read_file",
        arguments={"name": "pdf-forms", "path": "references/fields.md"},
    )
    assert read["isError"] is False and "f1: name" in read["content"]
    listed = client.ok("tools.call", name="skills_list", arguments={})
    assert "commit-message" in listed["content"]
    activated = client.ok(
        "tools.call", name="activate_skill", arguments={"skillName": "commit-message"}
    )
    assert activated["isError"] is False
    for name, args in [
        ("skill_load", {"name": "no-such-skill"}),
        ("skill_load", {}),
        ("skill_search", {"query": 5}),
        ("skill_read_file", {"name": "pdf-forms", "file": "../../etc/passwd"}),
        ("nonexistent_tool", {}),
    ]:
        failed = client.ok("tools.call", name=name, arguments=args)
        assert failed["isError"] is True and failed["content"], (name, args)
    ghost = client.ok(
        "tools.call", name="skill_load", arguments={"name": "pdf-forms"}, sessionId="ghost"
    )
    assert ghost["isError"] is True and "ghost" in ghost["content"]
    envelope = client.err("tools.call", arguments={})
    assert envelope["code"] == -32602 and "name" in envelope["message"]


def test_skills_changed_on_atomic_save_and_new_folder(
    client: Client, tree: dict[str, Path]
) -> None:
    client.ok("skills.list")
    target = tree["pdf"] / "SKILL.md"
    tmp = tree["pdf"] / ".SKILL.md.swp"
    tmp.write_text(target.read_text().replace("Fill and inspect", "Fill, sign and inspect"))
    os.replace(tmp, target)
    note = client.wait_note("skills.changed")["params"]
    assert note["cwd"] == os.fspath(tree["project"]) and note["generation"] == 2
    assert len(note["changed"]) == 1 and note["added"] == note["removed"] == []
    listed = client.ok("skills.list")
    assert listed["skills"][0]["description"] == "Fill, sign and inspect PDF forms."
    # A skills folder created after start, in a nested cwd, is picked up.
    sub = Client(client.daemon, tree["sub"])
    sub.notes = client.notes
    assert names(sub.ok("skills.list")["skills"])[0] == ("pdf-forms", "repo")
    write_skill(tree["sub"] / ".agents" / "skills", "web-a11y", "Audit web accessibility.")
    note = sub.wait_note("skills.changed")["params"]
    assert note["cwd"] == os.fspath(tree["sub"]) and len(note["added"]) == 1
    assert names(sub.ok("skills.list")["skills"])[0] == ("web-a11y", "repo")


def test_progress_is_reported_for_a_cold_scan(client: Client) -> None:
    result = client.ok("skills.list", _meta={"progressToken": "scan-1"})
    assert len(result["skills"]) == 4
    notes = [n for n in client.notes if n.get("method") == "$/progress"]
    assert [n["params"]["token"] for n in notes] == ["scan-1", "scan-1"]
    assert notes[0]["params"]["value"]["percentage"] == 0
    assert notes[-1]["params"]["value"] == {"message": "4 skills, 1 invalid", "percentage": 100}
    # A cached catalog needs no scan, so nothing more is reported.
    client.notes.clear()
    client.ok("skills.list", _meta={"progressToken": "scan-2"})
    assert not [n for n in client.notes if n.get("method") == "$/progress"]


def test_extra_roots_from_initialize_call_and_session(
    client: Client, tree: dict[str, Path]
) -> None:
    roots = {}
    for label in ("conn", "call", "sess"):
        root = tree["tmp"] / f"extra-{label}"
        write_skill(root, f"{label}-skill", f"Only visible through the {label} extra root.")
        roots[label] = os.fspath(root)
    client.ok("initialize", extraRoots=[roots["conn"]])
    listed = names(client.ok("skills.list")["skills"])
    assert ("conn-skill", "extra") in listed  # for the whole connection
    per_call = names(client.ok("skills.list", extraRoots=[roots["call"]])["skills"])
    assert ("call-skill", "extra") in per_call
    assert ("call-skill", "extra") not in names(client.ok("skills.list")["skills"])  # no leak
    sid = client.ok("session.open", extraRoots=[roots["sess"]])["sessionId"]
    assert ("sess-skill", "extra") in names(client.ok("skills.list", sessionId=sid)["skills"])
    assert ("sess-skill", "extra") not in names(client.ok("skills.list")["skills"])
    loaded = client.ok("skills.load", name="sess-skill", sessionId=sid)
    assert loaded["skill"]["scope"] == "extra"


def test_tools_call_defaults_and_reload_suppression(client: Client) -> None:
    # `arguments` left out: it defaults to {}.
    listed = client.raw("tools.call", {"name": "skills_list", "cwd": client.cwd})
    assert listed["result"]["isError"] is False and "pdf-forms" in listed["result"]["content"]
    missing = client.raw("tools.call", {"name": "skill_load", "cwd": client.cwd})
    assert missing["result"]["isError"] is True
    sid = client.ok("session.open")["sessionId"]
    args = {"name": "pdf-forms"}
    first = client.ok("tools.call", name="skill_load", arguments=args, sessionId=sid)
    assert "Run scripts/fill.py." in first["content"]
    second = client.ok("tools.call", name="skill_load", arguments=args, sessionId=sid)
    assert second["isError"] is False
    assert second["content"].startswith("<skill_context_reminder")
    assert "Run scripts/fill.py." not in second["content"]


def test_mentions_relative_links_and_no_fallback(client: Client) -> None:
    text = "[$pdf-forms](.agents/skills/pdf-forms/SKILL.md) and [$pdf-forms](/nope/SKILL.md)"
    resolved, missing = client.ok("skills.mentions", text=text)["mentions"]
    assert resolved["skill"]["name"] == "pdf-forms"
    assert "skill" not in missing and missing["error"]["kind"] == "skill_not_found"


def test_session_disable_hides_from_prompt_and_mentions_only_there(client: Client) -> None:
    sid = client.ok("session.open")["sessionId"]
    client.ok(
        "skills.setEnabled", name="commit-message", enabled=False, persist="session", sessionId=sid
    )
    assert "commit-message" not in client.ok("skills.prompt", sessionId=sid)["text"]
    assert "commit-message" in client.ok("skills.prompt")["text"]
    assert client.ok("skills.mentions", text="$commit-message", sessionId=sid)["mentions"] == []
    (seen,) = client.ok("skills.mentions", text="$commit-message")["mentions"]
    assert seen["skill"]["name"] == "commit-message"
