"""The handler registry: method name -> how to decode its params, run it and check its result.

Param and result types come from the protocol's method table (``skillsd_protocol.METHODS``); the
endpoint (`skillsd.jsonrpc.endpoint`) looks handlers up here for every request."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from skillsd_protocol import METHODS, NOTIFICATIONS

__all__ = [
    "CANCEL_METHOD",
    "PROGRESS_METHOD",
    "AnyResult",
    "Encoded",
    "Handler",
    "HandlerMode",
    "Router",
]

HandlerMode = Literal["async", "thread", "inline"]

CANCEL_METHOD = "$/cancelRequest"
PROGRESS_METHOD = "$/progress"


class AnyResult:
    """Marker: a handler's result type is not checked (test hooks, ad-hoc methods)."""


@dataclass(frozen=True, slots=True)
class Encoded:
    """A result encoded ahead of time, for a large answer many requests share (one encoding
    per catalog instead of one per request): ``raw`` is the JSON of a ``type`` Struct."""

    type: type[msgspec.Struct]
    raw: msgspec.Raw

    @classmethod
    def of(cls, result: msgspec.Struct) -> Encoded:
        return cls(type(result), msgspec.Raw(msgspec.json.encode(result)))


@dataclass(frozen=True, slots=True)
class Handler:
    """A registered method: how to decode its params, run it and check its result."""

    method: str
    fn: Callable[..., Any]
    mode: HandlerMode
    params_type: type[Any]
    result_type: Any
    notification: bool
    decoder: msgspec.json.Decoder[Any]


_FROM_TABLE: Any = object()


class Router:
    """The handler registry: method name -> `Handler`.

    Param and result types come from ``METHODS`` / ``NOTIFICATIONS``; a method outside those
    tables must name its ``params_type`` (and may name a ``result_type``).
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}
        self._emitted: set[str] = {PROGRESS_METHOD}

    def add(
        self,
        method: str,
        fn: Callable[..., Any],
        *,
        mode: HandlerMode = "async",
        params_type: type[Any] | None = None,
        result_type: Any = _FROM_TABLE,
    ) -> None:
        """Register ``fn`` for ``method`` (a method may be registered once)."""
        if method in self._handlers or method == CANCEL_METHOD:
            raise ValueError(f"method {method!r} is already registered")
        if mode not in ("async", "thread", "inline"):
            raise ValueError(f"unknown handler mode {mode!r} for {method!r}")
        if inspect.iscoroutinefunction(fn) != (mode == "async"):
            kind = "an async def" if mode == "async" else "a plain (non-async) function"
            raise ValueError(f"{method!r}: mode {mode!r} needs {kind}")
        notification = False
        if method in METHODS:
            spec = METHODS[method]
            default_params, default_result = spec.params, spec.result
        elif method in NOTIFICATIONS:
            default_params, default_result, notification = NOTIFICATIONS[method], None, True
        else:
            if params_type is None:
                raise ValueError(f"{method!r} is not in the method table: pass params_type")
            default_params, default_result = params_type, AnyResult
        ptype = params_type or default_params
        rtype = default_result if result_type is _FROM_TABLE else result_type
        self._handlers[method] = Handler(
            method, fn, mode, ptype, rtype, notification, msgspec.json.Decoder(ptype)
        )

    def method(
        self,
        method: str,
        *,
        mode: HandlerMode = "async",
        params_type: type[Any] | None = None,
        result_type: Any = _FROM_TABLE,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of `add`."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add(method, fn, mode=mode, params_type=params_type, result_type=result_type)
            return fn

        return decorate

    def adopt(self, other: Router) -> None:
        """Take ``other``'s handlers (replacing stand-ins of the same names) and notifications."""
        self._handlers.update(other._handlers)
        self._emitted |= other._emitted

    def emits(self, notification: str) -> None:
        """Declare a server->client notification (listed by ``initialize``)."""
        self._emitted.add(notification)

    def get(self, method: str) -> Handler | None:
        return self._handlers.get(method)

    @property
    def methods(self) -> list[str]:
        """Request methods, sorted."""
        return sorted(m for m, h in self._handlers.items() if not h.notification)

    @property
    def notifications(self) -> list[str]:
        """Notifications handled or sent, sorted (``$/cancelRequest`` is always handled)."""
        handled = {m for m, h in self._handlers.items() if h.notification}
        return sorted(handled | self._emitted | {CANCEL_METHOD})
