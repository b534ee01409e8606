"""Layering rules that keep the core sans-IO (see docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "skillsd"
CORE = PACKAGE / "core"
FORBIDDEN_IN_CORE = {
    "asyncio",
    "socket",
    "selectors",
    "watchdog",
    "ssl",
    "threading",
    "skillsd.daemon",
    "skillsd.runtime",  # the layer above the core: importing it back would be a cycle
    "skillsd.installing",
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _sans_io_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_core_never_imports_io_frameworks() -> None:
    offenders = {}
    for path in _sans_io_modules():
        bad = {
            name
            for name in _imports(path)
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_CORE)
        }
        if bad:
            offenders[path.name] = sorted(bad)
    assert not offenders, f"core modules import I/O frameworks: {offenders}"


def test_core_does_not_import_the_cli() -> None:
    for path in _sans_io_modules():
        assert not any(n.startswith("skillsd.cli") for n in _imports(path)), path.name


#: Calls that read, list, stat, write or lock a file (``os.path.realpath`` alone does not count).
FILE_CALLS = {
    "open",
    "stat",
    "lstat",
    "fstat",
    "scandir",
    "listdir",
    "walk",
    "exists",
    "isfile",
    "isdir",
    "islink",
    "getmtime",
    "getsize",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "iterdir",
    "mkdir",
    "makedirs",
    "unlink",
    "rename",
    "fsync",
    "flock",
}
FILE_MODULES = {"fcntl", "shutil", "tempfile", "glob"}
#: Plain names a pure module may take from a ``fs_`` module: types, constants and functions of
#: values that happen to live beside the reading code.
PURE_NAMES_OF_FS_MODULES = {
    "skillsd.core.discovery.fs_commands": {"CommandScan", "command_list"},
    "skillsd.core.discovery.fs_roots": {"FoundSkill", "Root", "RootPlan", "repo_chain"},
    "skillsd.core.skill.fs_skillfile": {"SKILL_FILE", "Mode"},
    "skillsd.core.catalog.fs_skill_evidence": {"NO_EVIDENCE", "EvidenceCache", "SkillEvidence"},
    "skillsd.core.install.fs_skill_digest": {"is_digest"},
    "skillsd.core.install.fs_install_source": {"is_loopback_host"},
}


def _is_fs_module(path: Path) -> bool:
    return path.parent.name == "fs" or path.name.startswith("fs_")


def test_core_modules_that_touch_files_say_so_by_name() -> None:
    """A core module that reads, lists, stats, writes or locks files is named ``fs_*`` (or lives
    in ``core/fs``); every other core module is plain functions and types over values."""
    offenders: dict[str, list[str]] = {}
    for path in _sans_io_modules():
        if _is_fs_module(path) or path.name == "__init__.py":
            continue
        found: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id == "open":
                    found.append(f"open() line {node.lineno}")
                elif (
                    isinstance(func, ast.Attribute)
                    and func.attr in FILE_CALLS
                    and ast.unparse(func.value) in {"os", "os.path", "Path", "pathlib.Path"}
                ):
                    found.append(f"{ast.unparse(func)}() line {node.lineno}")
            elif isinstance(node, ast.Import | ast.ImportFrom):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                names = [alias.name for alias in node.names]
                for name in [module] if module else names:
                    if name is None:
                        continue
                    if name in FILE_MODULES or name.startswith("skillsd.core.fs."):
                        found.append(f"imports {name}")
                    elif name.rsplit(".", 1)[-1].startswith("fs_"):
                        allowed = PURE_NAMES_OF_FS_MODULES.get(name, set())
                        extra = sorted(set(names) - allowed)
                        if extra:
                            found.append(f"imports {extra} from {name}")
        if found:
            offenders[str(path.relative_to(CORE))] = found
    assert not offenders, f"core modules touching files without an fs_ name: {offenders}"


def test_the_use_cases_have_one_home() -> None:
    """The synchronous operations layer dissolved into the runtime: one layer of use cases."""
    assert not (PACKAGE / "operations.py").exists()
    assert not (PACKAGE / "runtime" / "requests.py").exists()


#: The faces: each translates its own wire (or screen) to the runtime and back.
FACES = ("daemon", "mcp_bridge", "cli", "tui")
#: Beneath the faces: the core, installing, the runtime (services and use cases) and JSON-RPC
#: on a stream (the daemon's methods and MCP on stdio are both spoken with it).
BENEATH = ("core", "installing", "runtime", "jsonrpc")


def _package_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "skillsd" else None


def _modules(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


#: The CLI is also the program's entry: ``serve``/``proxy``, ``mcp`` and ``ui`` start the other
#: faces through these entry points, and use nothing else of them.
FACE_ENTRIES = {
    "skillsd.daemon.app",
    "skillsd.daemon.proxy",
    "skillsd.daemon.socket_server",
    "skillsd.daemon.stdio",
    "skillsd.mcp_bridge.transports",
    "skillsd.tui",
}


def test_no_face_imports_another() -> None:
    offenders = {}
    for face in FACES:
        for path in _modules(face):
            others = {
                n
                for n in _imports(path)
                if _package_of(n) in FACES
                and _package_of(n) != face
                and not (face == "cli" and n in FACE_ENTRIES)
            }
            if others:
                offenders[str(path.relative_to(PACKAGE))] = sorted(others)
    assert not offenders, f"a face imports another face: {offenders}"


def test_nothing_beneath_the_faces_imports_a_face() -> None:
    offenders = {}
    for path in [p for b in BENEATH for p in _modules(b)]:
        faces = {n for n in _imports(path) if _package_of(n) in FACES}
        if faces:
            offenders[str(path.relative_to(PACKAGE))] = sorted(faces)
    assert not offenders, f"the runtime or the core imports a face: {offenders}"


def test_the_mcp_bridge_and_the_daemon_share_the_runtime() -> None:
    for face in ("daemon", "mcp_bridge"):
        imported = {n for p in _modules(face) for n in _imports(p)}
        assert any(n.startswith("skillsd.runtime") for n in imported), face


#: What builds a catalog, a search or a suggestion index: the runtime's work. The CLI runs the
#: runtime's use cases (:mod:`skillsd.cli.in_process`), so it never assembles them again.
CORE_BUILDERS = (
    "skillsd.core.catalog.fs_catalog_build",
    "skillsd.core.discovery.fs_roots",
    "skillsd.core.catalog.search",
    "skillsd.core.catalog.suggest",
)


def test_the_cli_stays_on_the_runtime() -> None:
    offenders = {}
    for path in _modules("cli"):
        where = str(path.relative_to(PACKAGE))
        built = {
            n for n in _imports(path) if any(n == b or n.startswith(b + ".") for b in CORE_BUILDERS)
        }
        if built:
            offenders[where] = sorted(built)
    assert not offenders, f"a CLI command assembles what the runtime does: {offenders}"


def _module_graph() -> dict[str, set[str]]:
    """Each skillsd module -> the skillsd modules it imports (type-only imports included)."""
    modules: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(("skillsd", *path.relative_to(PACKAGE).with_suffix("").parts))
        name = name.removesuffix(".__init__")
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        modules[name] = found
    return {m: {d for d in deps if d in modules and d != m} for m, deps in modules.items()}


def test_no_import_cycles() -> None:
    graph = _module_graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        path.append(module)
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep) :], dep])
            elif dep not in state:
                visit(dep, path)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    assert not cycles, [" -> ".join(c) for c in cycles]


TESTS = PACKAGE.parent / "tests"


def _test_module_imports(path: Path) -> set[str]:
    """Every ``tests.*`` module ``path`` imports, with ``from tests.x import y`` counted as both
    ``tests.x`` and ``tests.x.y`` (``y`` may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.split(".")[0] == "tests"}


def test_no_test_module_imports_another() -> None:
    """What tests share lives in ``tests/support/`` (or a helper module beside them), never in a
    ``test_*`` module: importing one would run its tests' module-level set-up and tie the two."""
    offenders = [
        f"{path.relative_to(TESTS.parent)} imports {name}"
        for path in sorted(TESTS.rglob("*.py"))
        if "fixtures" not in path.relative_to(TESTS).parts
        for name in sorted(_test_module_imports(path))
        if any(part.startswith("test_") for part in name.split(".")[1:])
    ]
    assert offenders == []
    assert (TESTS / "support" / "__init__.py").is_file()
