"""The Python client on the bundled example project: list, search and load skills.

    python examples/client_demo.py

It starts a private ``skillsd serve`` (the client spawns it on stdio and stops it at the end),
isolated from your own skills and settings: the example project and the example user's home
stand in for yours, and config and state live in a temporary directory.
"""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
from pathlib import Path

from skillsd_client import Client, RpcError
from skillsd_protocol.errors import AmbiguousSkillData
from skillsd_protocol.messages import ClientInfo

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "project"
HOME = HERE / "home"


def environment(state: Path) -> dict[str, str]:
    """Point skillsd at the example project and the example user's home, nothing else."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLSD_")}
    env.pop("AGENT_SKILLS_PATH", None)
    env.update(
        SKILLSD_ROOT=str(PROJECT),
        HOME=str(HOME),
        SKILLSD_CONFIG=str(state / "config.toml"),
        XDG_STATE_HOME=str(state / "state"),
        XDG_CONFIG_HOME=str(state / "config"),
    )
    return env


def demo(client: Client) -> None:
    info = client.initialize(client_info=ClientInfo(name="client-demo"))
    print(
        f"connected to {info.server_info.name} {info.server_info.version}, "
        f"protocol {info.protocol_version}"
    )

    print("\n== skills.list")
    catalog = client.list_skills()
    for skill in catalog.skills:
        print(f"  {skill.scope:<5} {skill.name:<16} {textwrap.shorten(skill.description, 60)}")
    for error in catalog.errors:
        print(f"  invalid: {Path(error.path).parent.name}: {error.message}")

    print("\n== skills.search 'release notes'")
    for hit in client.search(query="release notes", limit=3).results:
        print(f"  {hit.skill.name:<16} {hit.reason:<13} score {hit.score:.2f}")

    print("\n== skills.load changelog-check (in a session)")
    session = client.session_open(session_id="demo").session_id
    loaded = client.load(name="changelog-check", session_id=session)
    print(f"  {len(loaded.body.splitlines())} body lines, files: {loaded.files or 'none'}")
    again = client.load(name="changelog-check", session_id=session)
    print(f"  loaded again: alreadyLoaded={again.already_loaded}")

    print("\n== skills.load pdf-forms (two skills share that name)")
    try:
        client.load(name="pdf-forms", session_id=session)
    except RpcError as exc:
        print(f"  error {exc.code} {exc.kind}")
        assert isinstance(exc.details, AmbiguousSkillData)
        for candidate in exc.details.candidates:
            print(f"    candidate ({candidate.scope}): {candidate.path}")
        chosen = exc.details.candidates[0]
        pdf = client.load(id=chosen.id, session_id=session)
        print(
            f"  loaded {pdf.skill.name} from the {pdf.skill.scope} scope by id; "
            f"files: {', '.join(pdf.files)}"
        )
        fields = client.read_file(id=chosen.id, file="references/fields.md")
        print(f"  references/fields.md: {fields.size} bytes, {fields.encoding}")

    client.session_close(session_id=session)
    client.shutdown()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="skillsd-client-demo-") as tmp:
        state = Path(tmp)
        # Loads ask the user by default (docs/permissions.md); this host, like most, allows them
        # outright.
        (state / "config.toml").write_text('[permissions]\nallow = ["skill_load"]\n')
        with Client.spawn(cwd=PROJECT, env=environment(state), timeout=30) as client:
            demo(client)
    return 0


if __name__ == "__main__":
    sys.exit(main())
