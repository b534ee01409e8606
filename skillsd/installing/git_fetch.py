"""Fetching a git source with the ``git`` program, without running anything from it.

Every command runs with hooks pointed at ``/dev/null``, no submodules, no fsmonitor, the
``ext::`` transport refused, no terminal prompts (``GIT_TERMINAL_PROMPT=0``, ssh in batch mode)
and stdin closed, under a time limit. Clones are shallow where the server allows it. A failure
raises :class:`GitError` carrying git's own last error line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from skillsd.core import limits

__all__ = ["Checkout", "GitError", "Progress", "checkout", "remote_commit", "run_git"]

#: Receives one line per long step ("cloning https://...").
Progress = Callable[[str], None]

#: Options that keep a repository's content from running anything or prompting.
_SAFE_CONFIG = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "submodule.recurse=false",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "advice.detachedHead=false",
    "-c",
    "init.defaultBranch=main",
)
_FULL_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SHORT_COMMIT = re.compile(r"[0-9a-f]{7,64}")


class GitError(Exception):
    """A git command failed: ``line`` is git's own most telling stderr line."""

    def __init__(self, command: str, line: str) -> None:
        super().__init__(f"git {command} failed: {line}")
        self.command = command
        self.line = line


def _env(base: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    # A template directory could copy hooks into the new repository; hooks are off anyway, but
    # nothing should be copied from outside.
    env["GIT_TEMPLATE_DIR"] = ""
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        env.pop(name, None)
    return env


def _error_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for prefix in ("fatal:", "error:"):
        for line in reversed(lines):
            if line.startswith(prefix):
                return line
    return lines[-1] if lines else "no error message"


def run_git(
    args: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = limits.INSTALL_FETCH_SECONDS,
) -> str:
    """Run ``git <safe config> args`` and return its stdout; raises :class:`GitError`."""
    command = args[0] if args else "git"
    try:
        done = subprocess.run(
            ["git", *_SAFE_CONFIG, *args],
            cwd=cwd,
            env=_env(os.environ if env is None else env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise GitError(command, "the git program is not installed (not found on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(command, f"no answer within {timeout:g} seconds") from None
    if done.returncode != 0:
        raise GitError(command, _error_line(done.stderr))
    return done.stdout


@dataclass(frozen=True, slots=True)
class Checkout:
    """A fetched tree: ``path`` holds the work tree at ``commit``."""

    path: str
    commit: str


def _head(path: str, env: Mapping[str, str] | None) -> str:
    return run_git(["rev-parse", "HEAD"], cwd=path, env=env).strip()


def checkout(
    url: str,
    dest: str,
    *,
    ref: str | None,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> Checkout:
    """Clone ``url`` into the new folder ``dest`` at ``ref`` (a branch, tag or commit; None:
    the default branch). Shallow when the server allows it."""
    if progress:
        progress(f"cloning {url}" + (f" at {ref}" if ref else ""))
    if url.startswith("-") or (ref or "").startswith("-"):
        raise GitError("clone", f"refusing an argument that starts with '-': {url!r} {ref!r}")
    shallow = ["--depth", "1"] if "://" in url or "@" in url.split("/", 1)[0] else []
    base = ["clone", "--quiet", "--no-recurse-submodules", *shallow]
    if ref is None:
        run_git([*base, "--", url, dest], env=env)
        return Checkout(dest, _head(dest, env))
    if not _SHORT_COMMIT.fullmatch(ref):
        try:
            run_git([*base, "--branch", ref, "--single-branch", "--", url, dest], env=env)
            return Checkout(dest, _head(dest, env))
        except GitError as exc:
            if "not found" not in exc.line and "Could not find" not in exc.line:
                raise
            # Not a branch or tag name the server advertises: try it as any revision below.
    if _FULL_COMMIT.fullmatch(ref):
        # Fetching one commit by id is shallow where the server allows it (GitHub does).
        os.makedirs(dest, exist_ok=True)
        run_git(["init", "--quiet", dest], env=env)
        try:
            run_git(["fetch", "--quiet", "--depth", "1", "--", url, ref], cwd=dest, env=env)
            run_git(["checkout", "--quiet", "FETCH_HEAD"], cwd=dest, env=env)
            return Checkout(dest, _head(dest, env))
        except GitError:
            shutil.rmtree(dest, ignore_errors=True)
    # A full clone, then the revision (an abbreviated commit, or a ref only a full clone has).
    run_git(
        ["clone", "--quiet", "--no-recurse-submodules", "--no-checkout", "--", url, dest], env=env
    )
    try:
        run_git(["checkout", "--quiet", ref, "--"], cwd=dest, env=env)
    except GitError as exc:
        raise GitError(
            "checkout", f"no branch, tag or commit {ref!r} in {url} ({exc.line})"
        ) from None
    return Checkout(dest, _head(dest, env))


def remote_commit(url: str, ref: str | None, *, env: Mapping[str, str] | None = None) -> str | None:
    """The commit ``ref`` (None: the default branch) names on the remote now, without fetching
    it; None when the remote does not advertise it (an abbreviated commit, say)."""
    if ref is not None and _FULL_COMMIT.fullmatch(ref):
        return ref  # a commit never moves
    wanted = ref or "HEAD"
    out = run_git(["ls-remote", "--", url, wanted], env=env)
    best: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        best[name] = sha
    if ref is None:
        return best.get("HEAD")
    for name in (
        f"refs/tags/{ref}^{{}}",
        f"refs/tags/{ref}",
        f"refs/heads/{ref}",
        f"{ref}^{{}}",
        ref,
    ):
        if name in best:
            return best[name]
    return None
