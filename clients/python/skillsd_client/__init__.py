"""Python client for the skillsd daemon: sync (`Client`) and asyncio (`AsyncClient`).

Three ways to connect, on both classes:

* ``spawn()`` starts a private ``skillsd serve`` on stdio (it exits with the client);
* ``connect(path)`` joins a daemon listening on a Unix socket;
* ``connect_shared()`` joins the per-user shared daemon, starting it if none is running.

Every protocol method is a typed method taking keyword arguments and returning the result
Struct from `skillsd_protocol.messages`. This package needs only msgspec and skillsd_protocol.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillsd_client._async_client import (
        AsyncClient,
        Notification,
        NotificationCallback,
        NotificationStream,
        ProgressCallback,
    )
    from skillsd_client._connect import default_command
    from skillsd_client._errors import (
        ClientError,
        ConnectError,
        ConnectionClosed,
        ProtocolError,
        RequestTimeout,
        RpcError,
    )
    from skillsd_client._local_socket import default_socket_path, runtime_dir
    from skillsd_client._mirror import CatalogMirror
    from skillsd_client._sync_client import Client, SyncNotificationStream

#: Where each public name lives. They are imported on first use, so a short-lived process that
#: needs one light piece (``skillsd_client._local_socket``) does not pay for asyncio.
_HOMES = {
    **dict.fromkeys(
        (
            "AsyncClient",
            "Notification",
            "NotificationCallback",
            "NotificationStream",
            "ProgressCallback",
        ),
        "_async_client",
    ),
    "default_command": "_connect",
    **dict.fromkeys(
        (
            "ClientError",
            "ConnectError",
            "ConnectionClosed",
            "ProtocolError",
            "RequestTimeout",
            "RpcError",
        ),
        "_errors",
    ),
    "default_socket_path": "_local_socket",
    "runtime_dir": "_local_socket",
    "CatalogMirror": "_mirror",
    "Client": "_sync_client",
    "SyncNotificationStream": "_sync_client",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'skillsd_client' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"skillsd_client.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AsyncClient",
    "CatalogMirror",
    "Client",
    "ClientError",
    "ConnectError",
    "ConnectionClosed",
    "Notification",
    "NotificationCallback",
    "NotificationStream",
    "ProgressCallback",
    "ProtocolError",
    "RequestTimeout",
    "RpcError",
    "SyncNotificationStream",
    "default_command",
    "default_socket_path",
    "runtime_dir",
]
