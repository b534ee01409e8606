"""A user's first day, as ``docs/install.md`` tells it: the wheel built from this checkout,
installed into a fresh virtual environment, run from somewhere else. Every package (the
runtime, the MCP bridge, the protocol and the client) must be in it: ``skillsd --version``,
``skillsd doctor`` and an MCP ``initialize`` + ``tools/list`` through the installed ``skillsd``
entry point.

The dependencies come from this suite's own environment (a ``.pth`` line), so the test needs no
network; skillsd itself comes from the wheel only (checked by where it is imported from)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = [pytest.mark.slow, pytest.mark.process]

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel of this checkout installed; returns its ``bin``."""
    base = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base), str(REPO)],
        check=True,
        capture_output=True,
    )
    (wheel,) = base.glob("skillsd-*.whl")
    venv = base / "venv"
    # Without pip of its own (bootstrapping one costs seconds): this suite's pip installs the
    # wheel into the venv (``--python``), entry point scripts and all, as the venv's pip would.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The dependencies of this suite's environment, after the venv's own packages.
    (Path(site) / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env


def test_the_wheel_holds_every_package(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import skillsd, skillsd.runtime.use_cases, skillsd.mcp_bridge.native_http, "
        "skillsd_protocol, skillsd_client; print(skillsd.__file__)"
    )
    where = subprocess.run(
        [str(installed / "python"), "-c", probe],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(installed.parent)), where  # from the wheel, not the checkout
    version = subprocess.run(
        [str(installed / "skillsd"), "--version"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("skillsd "), version.stdout


def test_the_first_day_commands_of_the_install_guide(installed: Path, tmp_path: Path) -> None:
    """``skillsd doctor`` on a new user's project, and ``completion``, from the installed
    entry point: the commands docs/install.md gives, in the order it gives them."""
    guide = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    for command in ("skillsd --version", "skillsd doctor", "skillsd completion bash", "make dist"):
        assert command in guide, command
    home, project = tmp_path / "home", tmp_path / "project"
    skill = project / ".claude" / "skills" / "greet"
    skill.mkdir(parents=True)
    (project / ".git").mkdir()
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello.\n---\nHi.\n")
    env = {
        **_env(),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    env.pop("SKILLSD_CONFIG", None)
    doctor = subprocess.run(
        [str(installed / "skillsd"), "doctor"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert doctor.returncode == 0, doctor.stderr
    assert "summary: 1 skill(s) (1 enabled), 0 invalid" in doctor.stdout, doctor.stdout
    completion = subprocess.run(
        [str(installed / "skillsd"), "completion", "bash"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completion.returncode == 0 and "complete -o filenames -F _skillsd skillsd" in (
        completion.stdout
    )


def test_the_installed_entry_point_serves_mcp(installed: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(installed / "skillsd"), args=["mcp"], cwd=str(tmp_path), env=_env()
    )

    async def main() -> None:
        with anyio.fail_after(60):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                assert init.server_info.name == "skillsd"
                tools = await session.list_tools()
                assert {t.name for t in tools.tools} == {
                    "skill_search",
                    "skill_load",
                    "skill_read_file",
                }

    anyio.run(main)
