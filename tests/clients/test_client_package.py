"""The Python client package: self-contained, its typed methods current with the protocol, and
its default socket path the daemon's."""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

import skillsd_client
from skillsd.daemon import socket_paths
from skillsd_client import AsyncClient, Client
from skillsd_protocol import METHODS
from tests.import_isolation import imported_in_isolation

ROOT = Path(__file__).resolve().parents[2]


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_methods", ROOT / "clients" / "python" / "gen_methods.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_generated_methods_are_current() -> None:
    gen = load_generator()
    assert gen.OUTPUT.read_text(encoding="utf-8") == gen.generate(), (
        "skillsd_client/_methods.py is stale: run python clients/python/gen_methods.py"
    )


@pytest.mark.parametrize("cls", [AsyncClient, Client])
def test_one_typed_method_per_protocol_method(cls: type) -> None:
    gen = load_generator()
    assert set(gen.PY_NAMES) == set(METHODS)
    for method, name in gen.PY_NAMES.items():
        fn = getattr(cls, name)
        assert inspect.iscoroutinefunction(fn) == (cls is AsyncClient), name
        params = inspect.signature(fn).parameters
        fields = [
            f.name for f in msgspec.structs.fields(METHODS[method].params) if f.name != "meta"
        ]
        assert list(params) == ["self", *fields, "timeout", "on_progress"], method
        assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "self")
        assert method in (fn.__doc__ or "")


def test_readme_names_every_method() -> None:
    readme = (ROOT / "clients" / "python" / "README.md").read_text(encoding="utf-8")
    pairs = dict(re.findall(r"`([a-zA-Z$/.]+)` \| `([a-z_]+)`", readme))
    assert pairs == load_generator().PY_NAMES


@pytest.mark.process
def test_client_imports_only_msgspec_protocol_and_stdlib() -> None:
    # Any module outside the standard library, msgspec and the two packages is refused.
    out = imported_in_isolation(
        {"msgspec", "skillsd_protocol", "skillsd_client"},
        "import skillsd_client\n"
        "from skillsd_client import _async_client, _connect, _errors, _methods, _sync_client\n"
        "from skillsd_client import _transport\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'skillsd'))",
    )
    assert out.strip() == "[]"


def test_public_names_are_exported() -> None:
    for name in skillsd_client.__all__:
        assert getattr(skillsd_client, name) is not None


# -- the default socket path, as the daemon computes it -----------------------------------


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for var in ("SKILLSD_RUNTIME_DIR", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(var, raising=False)
    yield monkeypatch


def daemon_runtime_dir() -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return socket_paths.runtime_dir()


def private_dir(path: Path, mode: int = 0o700) -> Path:
    path.mkdir(parents=True)
    os.chmod(path, mode)
    return path


@pytest.mark.parametrize(
    "case",
    [
        "override",
        "xdg_private",
        "xdg_missing",
        "xdg_open_mode",
        "xdg_symlink",
        "xdg_relative",
        "xdg_below_world_writable",
        "unset",
    ],
)
def test_runtime_dir_matches_the_daemon(
    case: str, tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    base = private_dir(tmp_path / "base")
    if case == "override":
        clean_env.setenv("SKILLSD_RUNTIME_DIR", os.fspath(tmp_path / "custom"))
    elif case == "xdg_private":
        clean_env.setenv("XDG_RUNTIME_DIR", os.fspath(private_dir(base / "xdg")))
    elif case == "xdg_missing":
        clean_env.setenv("XDG_RUNTIME_DIR", os.fspath(base / "not-yet"))
    elif case == "xdg_open_mode":
        clean_env.setenv("XDG_RUNTIME_DIR", os.fspath(private_dir(base / "xdg", 0o755)))
    elif case == "xdg_symlink":
        (base / "link").symlink_to(private_dir(base / "real"))
        clean_env.setenv("XDG_RUNTIME_DIR", os.fspath(base / "link"))
    elif case == "xdg_relative":
        clean_env.setenv("XDG_RUNTIME_DIR", "relative/dir")
    elif case == "xdg_below_world_writable":
        shared = private_dir(base / "shared", 0o777)
        clean_env.setenv("XDG_RUNTIME_DIR", os.fspath(private_dir(shared / "xdg")))
    expected = daemon_runtime_dir()
    assert skillsd_client.runtime_dir() == expected
    assert skillsd_client.runtime_dir(dict(os.environ)) == expected
    if case == "xdg_private":
        assert expected == base / "xdg" / "skillsd"
    if case in ("xdg_open_mode", "xdg_symlink", "xdg_below_world_writable"):
        assert not os.fspath(expected).startswith(os.fspath(base))


def test_default_socket_path_is_created_private(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "deep" / "run"
    clean_env.setenv("SKILLSD_RUNTIME_DIR", os.fspath(runtime))
    path = skillsd_client.default_socket_path()
    assert path == socket_paths.default_socket_path() == runtime / "skillsd.sock"
    assert os.stat(runtime).st_mode & 0o777 == 0o700
