"""The Python client against real daemons: spawned on stdio, on a socket the test starts, and
the shared daemon it starts itself (connect-or-start)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest

from skillsd_client import (
    AsyncClient,
    Client,
    ConnectError,
    ConnectionClosed,
    Notification,
    RequestTimeout,
    RpcError,
)
from skillsd_protocol import ERROR_DATA, PROTOCOL_VERSION, ErrorCode
from skillsd_protocol.errors import (
    AmbiguousSkillData,
    PathNotAllowedData,
    SessionNotFoundData,
    SkillNotFoundData,
)
from skillsd_protocol.messages import (
    ClientInfo,
    CommandsResult,
    InvokeResult,
    ListResult,
    LoadResult,
    ProgressValue,
    SearchResult,
    SkillsChangedParams,
)
from tests.fixtures.host_project import copy_host_project
from tests.support.daemons import daemon_pids, kill_pid, socket_daemon
from tests.support.env import daemon_env

T = TypeVar("T")
DEADLINE = 60.0


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run an async test body with an overall deadline, so a bug cannot hang the suite."""
    return asyncio.run(asyncio.wait_for(coro, DEADLINE))


@pytest.fixture
def environ(tree: dict[str, Path]) -> dict[str, str]:
    return daemon_env(tree)


@pytest.fixture
def short_dir() -> Iterator[Path]:
    # Unix socket paths are limited to ~100 bytes: pytest's tmp_path can be longer.
    path = Path(tempfile.mkdtemp(prefix="sdc-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until ``predicate()`` holds (polling), failing after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def assert_data_typed(exc: RpcError) -> None:
    """The daemon's ``data`` decodes into the kind's type with no member left unknown."""
    assert exc.kind in ERROR_DATA and exc.details is not None
    assert isinstance(exc.details, ERROR_DATA[exc.kind])
    known = {f.encode_name for f in msgspec.structs.fields(type(exc.details))} | {"kind"}
    assert set(exc.data) <= known, set(exc.data) - known


# -- stdio --------------------------------------------------------------------------------


@pytest.mark.process
def test_spawn_gives_typed_results(tree: dict[str, Path], environ: dict[str, str]) -> None:
    async def body() -> None:
        async with await AsyncClient.spawn(cwd=tree["project"], env=environ) as client:
            info = await client.initialize(client_info=ClientInfo(name="pytest"))
            assert info.protocol_version == PROTOCOL_VERSION
            assert "skills.search" in info.capabilities.methods
            listed = await client.list_skills()
            assert isinstance(listed, ListResult)
            assert [(s.name, s.scope) for s in listed.skills] == [
                ("pdf-forms", "repo"),
                ("release-notes", "repo"),
                ("commit-message", "user"),
                ("release-notes", "user"),
            ]
            assert listed.errors[0].path.endswith("broken/SKILL.md")
            pdf = listed.skills[0]
            assert pdf.allowed_tools == ["Read", "Bash(python:*)"] and pdf.same_name is None
            found = await client.search(query="pdf-forms")
            assert isinstance(found, SearchResult)
            assert found.results[0].reason == "exact_name" and found.count >= 1
            session = await client.session_open(session_id="s1")
            assert session.session_id == "s1" and session.resumed is False
            loaded = await client.load(path=pdf.dir, session_id="s1")
            assert isinstance(loaded, LoadResult) and loaded.already_loaded is False
            assert "references/fields.md" in loaded.files and "Run scripts/fill.py" in loaded.body
            again = await client.load(id=pdf.id, session_id="s1")
            assert again.already_loaded is True
            text = await client.read_file(name="pdf-forms", file="references/fields.md")
            assert text.encoding == "utf-8" and text.content.startswith("# Fields")
            binary = await client.read_file(name="pdf-forms", file="assets/logo.bin")
            assert binary.encoding == "base64"
            assert await client.shutdown() is None  # answered with null
            with pytest.raises(RpcError) as refused:  # only exit is accepted after shutdown
                await client.ping()
            assert refused.value.code == -32600

    run(body())


@pytest.mark.process
def test_commands_and_invoke(tmp_path: Path) -> None:
    project = copy_host_project(tmp_path)
    tree = {"tmp": tmp_path, "project": project, "home": tmp_path / "home"}

    async def body() -> None:
        async with await AsyncClient.spawn(cwd=project, env=daemon_env(tree)) as client:
            listed = await client.commands()
            assert isinstance(listed, CommandsResult)
            assert [c.name for c in listed.commands][:2] == ["deploy", "fix-issue"]
            result = await client.invoke(command="/fix-issue 7 low")
            assert isinstance(result, InvokeResult)
            assert result.arguments == ["7", "low"] and result.skill is not None
            assert "Fix GitHub issue #7 (priority: low)." in result.body
            with pytest.raises(RpcError) as refused:
                await client.invoke(name="api-conventions")
            assert refused.value.kind == "not_user_invocable"
            assert_data_typed(refused.value)

    run(body())


@pytest.mark.process
def test_a_relative_cwd_means_the_callers_directory(
    tree: dict[str, Path], environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The daemon runs elsewhere, as a shared one does; "." must be where the caller is.
    monkeypatch.chdir(tree["sub"])
    with Client.spawn(cwd=tree["tmp"], env=environ) as client:
        listed = client.list_skills(cwd=".")
        assert listed.cwd == os.fspath(tree["sub"]) and listed.root == os.fspath(tree["project"])
        assert "pdf-forms" in [s.name for s in listed.skills]
        raw = client.request("skills.list", {"cwd": "../.."})
        assert raw["cwd"] == os.fspath(tree["project"])

    async def body() -> None:
        async with await AsyncClient.spawn(cwd=tree["tmp"], env=environ) as client:
            hits = await client.search(query="pdf", cwd="..")
            assert hits.results and hits.results[0].skill.name == "pdf-forms"

    run(body())


@pytest.mark.process
def test_errors_carry_code_kind_and_typed_data(
    tree: dict[str, Path], environ: dict[str, str]
) -> None:
    async def body() -> None:
        async with await AsyncClient.spawn(cwd=tree["project"], env=environ) as client:
            with pytest.raises(RpcError) as ambiguous:
                await client.load(name="release-notes")
            assert ambiguous.value.code == ErrorCode.AMBIGUOUS_SKILL
            assert ambiguous.value.code_name == "AMBIGUOUS_SKILL"
            assert ambiguous.value.method == "skills.load"
            details = ambiguous.value.details
            assert isinstance(details, AmbiguousSkillData)
            assert sorted(c.scope for c in details.candidates) == ["repo", "user"]
            assert_data_typed(ambiguous.value)

            with pytest.raises(RpcError) as missing:
                await client.load(name="pdf-form")
            assert isinstance(missing.value.details, SkillNotFoundData)
            assert missing.value.details.suggestions == ["pdf-forms"]
            assert_data_typed(missing.value)

            with pytest.raises(RpcError) as escape:
                await client.read_file(name="pdf-forms", file="escape.txt")
            assert isinstance(escape.value.details, PathNotAllowedData)
            assert escape.value.details.file == "escape.txt"
            assert_data_typed(escape.value)

            with pytest.raises(RpcError) as no_session:
                await client.session_close(session_id="nope")
            assert isinstance(no_session.value.details, SessionNotFoundData)
            assert no_session.value.details.session_id == "nope"
            assert_data_typed(no_session.value)

            with pytest.raises(RpcError) as bad_params:
                await client.request("skills.search", {"query": 3})
            assert bad_params.value.code == ErrorCode.INVALID_PARAMS
            assert bad_params.value.kind is None and "$.query" in bad_params.value.message

            with pytest.raises(RpcError) as unknown:
                await client.request("skills.nope")
            assert unknown.value.code == ErrorCode.METHOD_NOT_FOUND

            # Plain-JSON requests work for any method, and the connection is still fine.
            raw = await client.request("skills.search", {"query": "commit"})
            assert raw["results"][0]["skill"]["name"] == "commit-message"

    run(body())


@pytest.mark.process
def test_notifications_reach_callbacks_and_iterators(
    tree: dict[str, Path], environ: dict[str, str]
) -> None:
    async def body() -> None:
        async with await AsyncClient.spawn(cwd=tree["project"], env=environ) as client:
            progress: list[ProgressValue] = []
            listed = await client.list_skills(force_reload=True, on_progress=progress.append)
            assert progress and progress[-1].percentage == 100.0
            raw_progress: list[ProgressValue] = []
            await client.request(
                "skills.list", {"forceReload": True}, on_progress=raw_progress.append
            )
            assert [p.message for p in raw_progress] == [p.message for p in progress]
            seen: list[Notification] = []
            unsubscribe = client.on_notification(seen.append, "skills.changed")
            async with client.notifications("skills.changed") as stream:
                skill_md = tree["pdf"] / "SKILL.md"
                skill_md.write_text(
                    skill_md.read_text(encoding="utf-8").replace("Fill and", "Fill, check and"),
                    encoding="utf-8",
                )
                note = await stream.next(timeout=10)
            assert isinstance(note.params, SkillsChangedParams)
            pdf_id = next(s.id for s in listed.skills if s.name == "pdf-forms")
            assert note.params.changed == [pdf_id] and note.params.added == []
            assert note.params.generation > listed.generation
            assert seen and seen[0].params == note.params
            unsubscribe()
            refreshed = await client.search(query="pdf-forms")
            assert refreshed.results[0].skill.description.startswith("Fill, check and")

    run(body())


@pytest.mark.process
def test_timeout_and_cancellation_cancel_at_the_daemon(
    tree: dict[str, Path], environ: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="skillsd_client")

    async def body() -> None:
        async with await AsyncClient.spawn(cwd=tree["project"], env=environ) as client:
            sent: list[dict[str, Any]] = []
            write = client._transport.write_message

            async def recording(payload: bytes) -> None:
                sent.append(json.loads(payload))
                await write(payload)

            client._transport.write_message = recording  # type: ignore[method-assign]

            def cancelled() -> list[int]:
                return [m["params"]["id"] for m in sent if m["method"] == "$/cancelRequest"]

            with pytest.raises(RequestTimeout) as timed_out:
                await client.request("_test.sleep", {"seconds": 30}, timeout=0.2)
            assert isinstance(timed_out.value, TimeoutError)
            await until(lambda: cancelled() == [sent[0]["id"]])

            # Cancelling the awaiting task cancels the request too.
            task = asyncio.create_task(client.request("_test.sleep", {"seconds": 30}))
            await until(lambda: len(sent) == 3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await until(lambda: cancelled() == [sent[0]["id"], sent[2]["id"]])

            # The daemon answers both with -32800 (dropped by the client) and keeps serving.
            assert (await client.search(query="pdf")).count >= 1

            def dropped() -> list[str]:
                return [r.getMessage() for r in caplog.records if "dropping reply" in r.message]

            await until(lambda: len(dropped()) == 2)
            assert all("-32800" in message for message in dropped()), dropped()

            # A client-wide default timeout applies to every call unless overridden.
            client.timeout = 0.2
            with pytest.raises(RequestTimeout):
                await client.request("_test.sleep", {"seconds": 30})
            slept = await client.request("_test.sleep", {"seconds": 0.3}, timeout=None)
            assert slept["slept"] == 0.3

    run(body())


@pytest.mark.process
def test_daemon_death_fails_pending_calls_with_its_stderr(
    tree: dict[str, Path], environ: dict[str, str]
) -> None:
    async def body() -> None:
        client = await AsyncClient.spawn(cwd=tree["project"], env=environ)
        try:
            with pytest.raises(RpcError) as crash:
                await client.request("_test.crash")
            assert crash.value.code == ErrorCode.INTERNAL_ERROR  # logged on the daemon's stderr
            pending = asyncio.create_task(client.request("_test.sleep", {"seconds": 30}))
            await client.ping()  # the sleep request is at the daemon now
            assert client.pid is not None
            os.kill(client.pid, signal.SIGKILL)
            with pytest.raises(ConnectionClosed) as lost:
                await pending
            assert lost.value.returncode == -signal.SIGKILL
            assert "crashed on purpose" in lost.value.stderr
            assert "crashed on purpose" in str(lost.value) and "_test.sleep" in str(lost.value)
            assert client.closed
            with pytest.raises(ConnectionClosed):
                await client.ping()
        finally:
            await client.close()

    run(body())


@pytest.mark.process
def test_a_daemon_that_cannot_start_explains_why(environ: dict[str, str]) -> None:
    async def body() -> None:
        async with await AsyncClient.spawn(args=["--no-such-flag"], env=environ) as client:
            with pytest.raises(ConnectionClosed) as failed:
                await client.ping()
            assert failed.value.returncode == 2
            assert "--no-such-flag" in failed.value.stderr

    run(body())


# -- the blocking client ------------------------------------------------------------------


@pytest.mark.process
def test_sync_client_is_safe_from_many_threads(
    tree: dict[str, Path], environ: dict[str, str]
) -> None:
    with Client.spawn(cwd=tree["project"], env=environ, timeout=30) as client:
        errors: list[BaseException] = []
        results: list[tuple[str, str]] = []
        lock = threading.Lock()

        def worker(n: int) -> None:
            try:
                for i in range(10):
                    query = ["pdf-forms", "commit-message"][(n + i) % 2]
                    hit = client.search(query=query).results[0]
                    listed = client.list_skills(scope="user")
                    with lock:
                        results.append((query, hit.skill.name))
                    assert [s.name for s in listed.skills] == ["commit-message", "release-notes"]
            except BaseException as exc:
                with lock:
                    errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(DEADLINE)
        assert not errors, errors
        assert len(results) == 80 and all(query == name for query, name in results)

        with pytest.raises(RpcError) as failed:
            client.load(name="nope-nope")
        assert failed.value.kind == "skill_not_found"
        with pytest.raises(RequestTimeout):
            client.request("_test.sleep", {"seconds": 30}, timeout=0.2)

        seen: list[Notification] = []
        client.on_notification(seen.append, "skills.changed")
        with client.notifications("skills.changed") as stream:
            (tree["skills"] / "fresh").mkdir()
            (tree["skills"] / "fresh" / "SKILL.md").write_text(
                "---\nname: fresh\ndescription: A new skill.\n---\nBody.\n", encoding="utf-8"
            )
            note = stream.get(timeout=10)
        assert isinstance(note.params, SkillsChangedParams) and len(note.params.added) == 1
        assert client.search(query="fresh").results[0].skill.id == note.params.added[0]
        assert seen and seen[0].params == note.params
    assert client.closed
    with pytest.raises(ConnectionClosed):
        client.ping()


@pytest.mark.process
def test_sync_stream_ends_when_the_daemon_dies(
    tree: dict[str, Path], environ: dict[str, str]
) -> None:
    with Client.spawn(cwd=tree["project"], env=environ, timeout=30) as client:
        stream = client.notifications()
        client.ping()
        assert client.pid is not None
        os.kill(client.pid, signal.SIGKILL)
        with pytest.raises(StopIteration):
            stream.get(timeout=10)
        with pytest.raises(ConnectionClosed) as lost:
            client.ping()
        assert lost.value.returncode == -signal.SIGKILL


# -- sockets ------------------------------------------------------------------------------


@pytest.mark.process
def test_connect_to_a_socket_daemon(
    tree: dict[str, Path], environ: dict[str, str], short_dir: Path
) -> None:
    path = short_dir / "d.sock"
    with socket_daemon(path, None, environ=environ) as proc:

        async def body() -> None:
            first = await AsyncClient.connect(path)
            second = await AsyncClient.connect(path)
            try:
                cwd = os.fspath(tree["project"])
                a, b = await asyncio.gather(
                    first.list_skills(cwd=cwd), second.search(query="release", cwd=cwd)
                )
                assert len(a.skills) == 4 and b.results[0].skill.name == "release-notes"
                assert first.pid is None and await first.stderr_tail() == ""
            finally:
                await first.close()
            # One client leaving does not take the shared daemon from the other.
            assert (await second.ping()) is not None
            await second.close()

        run(body())
        with Client.connect(path) as client:
            assert client.list_skills(cwd=os.fspath(tree["project"]), scope="user").skills
        assert proc.poll() is None
    with pytest.raises(ConnectError, match=re.escape(f"cannot connect to {path}")):
        Client.connect(path)


@pytest.mark.process
def test_spawning_a_missing_command_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConnectError, match="cannot start /no/such/skillsd"):
        Client.spawn(["/no/such/skillsd"], cwd=tmp_path)


@pytest.mark.process
def test_connect_shared_starts_one_daemon_and_reuses_it(
    tree: dict[str, Path], short_dir: Path
) -> None:
    runtime = short_dir / "run"
    environ = daemon_env(tree, SKILLSD_RUNTIME_DIR=os.fspath(runtime))
    socket_path = runtime / "skillsd.sock"
    try:

        async def body() -> None:
            # Two clients racing to start it: one daemon serves both.
            first, second = await asyncio.gather(
                AsyncClient.connect_shared(env=environ, idle_timeout=60),
                AsyncClient.connect_shared(env=environ, idle_timeout=60),
            )
            try:
                cwd = os.fspath(tree["project"])
                assert len((await first.list_skills(cwd=cwd)).skills) == 4
                assert (await second.search(query="commit", cwd=cwd)).count == 1
            finally:
                await first.close()
                await second.close()

        run(body())
        assert stat.S_IMODE(os.stat(runtime).st_mode) == 0o700
        # A starter that lost the race exits once it finds the lock taken: one daemon remains.
        pids = daemon_pids(socket_path)
        deadline = time.monotonic() + 10
        while len(pids) > 1 and time.monotonic() < deadline:
            time.sleep(0.02)
            pids = daemon_pids(socket_path)
        assert len(pids) == 1
        # A later client joins the running daemon instead of starting another.
        with Client.connect_shared(env=environ) as client:
            assert client.ping() is not None
        assert daemon_pids(socket_path) == pids
    finally:
        for pid in daemon_pids(socket_path):
            kill_pid(pid)


@pytest.mark.process
def test_connect_shared_reports_a_daemon_that_fails_to_start(short_dir: Path) -> None:
    runtime = short_dir / "run"
    environ = {**os.environ, "SKILLSD_RUNTIME_DIR": os.fspath(runtime)}
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('no luck today\\n'); exit(3)"]

    async def body() -> None:
        with pytest.raises(ConnectError) as failed:
            await AsyncClient.connect_shared(command=failing, env=environ, start_timeout=0.5)
        message = str(failed.value)
        assert "exited 3" in message and "no luck today" in message
        assert os.fspath(runtime / "skillsd.sock.log") in message

    run(body())


def test_connect_shared_refuses_a_runtime_dir_others_can_use(short_dir: Path) -> None:
    runtime = short_dir / "run"
    runtime.mkdir(mode=0o755)
    os.chmod(runtime, 0o755)
    environ = {**os.environ, "SKILLSD_RUNTIME_DIR": os.fspath(runtime)}
    with pytest.raises(ConnectError, match="mode 0755, expected 0700"):
        Client.connect_shared(env=environ)
    assert not (runtime / "skillsd.sock.log").exists()


def test_unknown_error_kinds_keep_their_data() -> None:
    error = RpcError(1099, "new", {"kind": "brand_new", "extra": 1}, method="x.y")
    assert error.kind == "brand_new" and error.details is None and error.data["extra"] == 1
    assert error.code_name is None and str(error) == "x.y: new"
    odd = RpcError(1001, "odd", {"kind": "skill_not_found", "suggestions": "not a list"})
    assert odd.kind == "skill_not_found" and odd.details is None


CLIENTS_ON_THREADS = """
import sys, threading
sys.setswitchinterval(1e-6)
from skillsd_client import Client, RpcError
path, cwd = sys.argv[1], sys.argv[2]
clients = [Client.connect(path) for _ in range(8)]
barrier = threading.Barrier(8)
failures = []

def first_calls(client):
    barrier.wait()
    try:
        assert client.list_skills(cwd=cwd).skills
        assert client.search(query="release", cwd=cwd).results
        try:
            client.load(name="no-such-skill", cwd=cwd)
        except RpcError as exc:
            assert exc.details is not None
    except Exception as exc:
        failures.append(repr(exc))

threads = [threading.Thread(target=first_calls, args=(c,)) for c in clients]
for t in threads:
    t.start()
for t in threads:
    t.join()
for c in clients:
    c.close()
print(failures)
"""


@pytest.mark.process
def test_clients_on_many_threads_make_their_first_decodes_together(
    tree: dict[str, Path], environ: dict[str, str], short_dir: Path
) -> None:
    """Several clients in one process, each on its own thread, decode a result type for the
    first time at once: the process must not crash (msgspec works a type's decoding information
    out on first use, and two threads doing that together crashed it)."""
    path = short_dir / "d.sock"
    with socket_daemon(path, None, environ=environ):
        for _ in range(6):
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    CLIENTS_ON_THREADS,
                    os.fspath(path),
                    os.fspath(tree["project"]),
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
            assert done.stdout.strip() == "[]", done.stdout
