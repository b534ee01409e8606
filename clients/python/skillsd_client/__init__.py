"""Python client for the skillsd daemon: sync (`Client`) and asyncio (`AsyncClient`).

Three ways to connect, on both classes:

* ``spawn()`` starts a private ``skillsd serve`` on stdio (it exits with the client);
* ``connect(path)`` joins a daemon listening on a Unix socket;
* ``connect_shared()`` joins the per-user shared daemon, starting it if none is running.

Every protocol method is a typed method taking keyword arguments and returning the result
Struct from `skillsd_protocol.messages`. This package needs only msgspec and skillsd_protocol.
"""

from skillsd_client._async_client import (
    AsyncClient,
    Notification,
    NotificationCallback,
    NotificationStream,
    ProgressCallback,
)
from skillsd_client._connect import default_command, default_socket_path, runtime_dir
from skillsd_client._errors import (
    ClientError,
    ConnectError,
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    RpcError,
)
from skillsd_client._mirror import CatalogMirror
from skillsd_client._sync_client import Client, SyncNotificationStream

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
