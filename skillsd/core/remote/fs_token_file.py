"""Bearer tokens kept in files: a token file must be a small regular file that neither group nor
others may read or write (checked on the descriptor that is read), holding one token of printable
ASCII long enough to be a secret. ``skillsd mcp --http --token-file`` reads its token this way,
and so does a remote's ``tokenFile``."""

from __future__ import annotations

import os
import shlex
import stat

from skillsd.core.fs.bounded_read import open_regular_file, read_at_most

__all__ = ["MIN_TOKEN_CHARS", "read_token_file", "weak_token"]

#: The shortest bearer token accepted (a generated one is 43).
MIN_TOKEN_CHARS = 32
#: A token file holds one token: anything longer is not one.
_TOKEN_FILE_MAX_BYTES = 4096
_MAKE_ONE = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


def read_token_file(path: str) -> tuple[str | None, str]:
    """The token in ``path``, or None and why it is refused: the file must be regular, small,
    neither readable nor writable by group or others (checked on the descriptor that is read)
    and hold a token long enough."""
    try:
        fd, st = open_regular_file(path)
    except ValueError:
        return None, "not a usable path"
    except OSError as exc:
        return None, exc.strerror or str(exc)
    try:
        mode = stat.S_IMODE(st.st_mode)
        for bits, what in ((0o044, "readable"), (0o022, "writable")):
            if mode & bits:
                return None, (
                    f"{what} by group or others (mode {mode:04o}); a secret must be private: "
                    f"chmod 600 {shlex.quote(path)}"
                )
        data = read_at_most(fd, _TOKEN_FILE_MAX_BYTES + 1)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    finally:
        os.close(fd)
    if len(data) > _TOKEN_FILE_MAX_BYTES:
        return None, f"over {_TOKEN_FILE_MAX_BYTES} bytes: a token file holds the token alone"
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    if not text:
        return None, "the file is empty"
    why = weak_token(text)
    return (None, why) if why else (text, "")


def weak_token(token: str) -> str:
    """Why ``token`` cannot be the bearer token, or ``""``."""
    if not all("!" <= c <= "~" for c in token):
        return "the token must be one word of printable ASCII (it travels in an HTTP header)"
    if len(token) < MIN_TOKEN_CHARS:
        return (
            f"the token is {len(token)} character{'s' if len(token) != 1 else ''} long; at least "
            f"{MIN_TOKEN_CHARS} are needed "
            f"(make one with: {_MAKE_ONE})"
        )
    return ""
