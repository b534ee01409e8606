"""JSON-RPC 2.0 messages as bytes: the envelope types, their encoders and decoders, and the
encoding of replies (results, errors) a connection sends."""

from __future__ import annotations

import logging
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from skillsd.core.fs.tree_walk import display_name
from skillsd.jsonrpc.framing import Payload
from skillsd.jsonrpc.router import AnyResult, Encoded, Handler
from skillsd_protocol.messages import CancelParams

log = logging.getLogger("skillsd.daemon")

RequestId = int | float | str | None


class Request(msgspec.Struct, gc=False):
    """A request or notification; anything that does not fit is re-read to explain why."""

    jsonrpc: Literal["2.0"]
    method: str
    id: int | float | str | UnsetType | None = UNSET
    params: msgspec.Raw = msgspec.Raw()


class ErrorObject(msgspec.Struct, omit_defaults=True, gc=False):
    code: int
    message: str
    data: Any = UNSET


class ErrorResponse(msgspec.Struct, gc=False):
    jsonrpc: str
    id: Any
    error: ErrorObject


class Response(msgspec.Struct, gc=False):
    jsonrpc: str
    id: Any
    result: Any


class Notification(msgspec.Struct, gc=False):
    jsonrpc: str
    method: str
    params: Any


ENCODER = msgspec.json.Encoder()
MESSAGE_DECODER = msgspec.json.Decoder(Request | list[msgspec.Raw])
MEMBER_DECODER = msgspec.json.Decoder(Request)
ANY_DECODER = msgspec.json.Decoder()
CANCEL_DECODER = msgspec.json.Decoder(CancelParams)
RESULT_HEAD = b'{"jsonrpc":"2.0","id":'
RESULT_MID = b',"result":'
EMPTY_OBJECT = b"{}"
TOO_DEEP = "JSON nested too deeply"
BAD_PARAMS = 'Invalid Request: "params" must be an object or an array'


def scrub_text(value: Any) -> Any:
    """``value`` (built-in types) with every string made encodable: the bytes of a file name
    that is not UTF-8 written ``\\xNN`` (:func:`skillsd.core.fs.tree_walk.display_name`)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return display_name(value)
        return value
    if isinstance(value, list):
        return [scrub_text(v) for v in value]
    if isinstance(value, dict):
        return {scrub_text(k): scrub_text(v) for k, v in value.items()}
    return value


def error_payload(id_: Any, code: int, message: str, data: Any = UNSET) -> bytes:
    error = ErrorResponse("2.0", id_, ErrorObject(int(code), message, data))
    try:
        return ENCODER.encode(error)
    except (TypeError, ValueError) as exc:
        # Unencodable error data is a bug in whoever raised; still answer the request.
        log.error("cannot encode error data for %r: %s", message, exc)
        return ENCODER.encode(ErrorResponse("2.0", id_, ErrorObject(int(code), message)))


def explain_invalid(obj: Any) -> tuple[RequestId, str]:
    """The id to echo (null unless it is usable) and why ``obj`` is not a request."""
    if not isinstance(obj, dict):
        kind = "array" if isinstance(obj, list) else type(obj).__name__
        return None, f"Invalid Request: expected a request object, got {kind}"
    raw_id = obj.get("id")
    id_: RequestId = (
        raw_id if isinstance(raw_id, int | float | str) and not isinstance(raw_id, bool) else None
    )
    if obj.get("jsonrpc") != "2.0":
        return id_, 'Invalid Request: "jsonrpc" must be "2.0"'
    if "method" not in obj:
        return id_, 'Invalid Request: missing "method"'
    if not isinstance(obj["method"], str):
        return id_, 'Invalid Request: "method" must be a string'
    if "id" in obj and id_ is None and raw_id is not None:
        return None, 'Invalid Request: "id" must be a string, a number or null'
    return id_, 'Invalid Request: "params" must be an object or an array'


def result_payload(id_: Any, handler: Handler, result: Any) -> Payload:
    """The reply of a request whose handler returned ``result``, checked against the method's
    result type; a pre-encoded result is sent in pieces from its encoding."""
    expected = handler.result_type
    checked = result
    if isinstance(result, Encoded):
        checked, result = result.type, result.raw
    if expected is None:
        if result is not None:
            raise TypeError(f"{handler.method} must return None, got {type(result).__name__}")
    elif (
        expected is not AnyResult
        and isinstance(expected, type)
        and not (
            issubclass(checked, expected)
            if isinstance(checked, type)
            else isinstance(checked, expected)
        )
    ):
        got = checked.__name__ if isinstance(checked, type) else type(checked).__name__
        raise TypeError(f"{handler.method} must return {expected.__name__}, got {got}")
    if isinstance(result, msgspec.Raw):
        # Already encoded (and valid UTF-8: msgspec wrote it): only the envelope is new.
        head = RESULT_HEAD + ENCODER.encode(id_) + RESULT_MID
        return (head, memoryview(result), b"}")
    # One encoding pass into a buffer the framer can extend in place: a 10 000-skill
    # `skills.list` reply is ~8 MB, and every concatenation would copy it again.
    payload = bytearray()
    try:
        ENCODER.encode_into(Response("2.0", id_, result), payload)
    except UnicodeEncodeError:
        # A text from a name that is not UTF-8 got this far (the scan skips those): send
        # it with each such byte written \xNN rather than fail the whole reply (docs/security.md).
        payload = bytearray()
        scrubbed = scrub_text(msgspec.to_builtins(result))
        ENCODER.encode_into(Response("2.0", id_, scrubbed), payload)
    return payload
