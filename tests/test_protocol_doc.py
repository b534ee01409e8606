"""docs/protocol.md is generated, current, and its recorded examples fit the protocol types.

The generator plays a scripted session against a real daemon on a copy of examples/; this test
runs it once and checks the document and every recorded message."""

from __future__ import annotations

import importlib.util
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from skillsd_protocol import (
    ERROR_DATA,
    KIND_CODES,
    METHODS,
    NOTIFICATION_SUMMARIES,
    NOTIFICATIONS,
    SERVER_NOTIFICATIONS,
    AnyErrorData,
    ErrorCode,
    ErrorObject,
)
from skillsd_protocol.schema import build_schema

ROOT = Path(__file__).resolve().parents[1]


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_protocol", ROOT / "docs" / "gen_protocol.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated() -> tuple[ModuleType, str, list[Any]]:
    gen = load_generator()
    text, exchanges = gen.generate()
    return gen, text, exchanges


@pytest.mark.process
def test_checked_in_doc_is_current(generated: tuple[ModuleType, str, list[Any]]) -> None:
    gen, text, _ = generated
    assert gen.OUTPUT.read_text(encoding="utf-8") == text, (
        "docs/protocol.md is stale: run python docs/gen_protocol.py"
    )


@pytest.mark.process
def test_every_method_and_daemon_notification_has_a_recorded_example(
    generated: tuple[ModuleType, str, list[Any]],
) -> None:
    _, text, exchanges = generated
    recorded = {m["method"] for x in exchanges for m in x.received if "method" in m}
    assert {x.step.method for x in exchanges if x.sent} == set(METHODS)
    assert recorded >= SERVER_NOTIFICATIONS
    for name in [*METHODS, *NOTIFICATIONS]:
        assert f"\n### {name}\n" in text
    for kind in KIND_CODES:
        assert f"| `{kind}` | {int(KIND_CODES[kind])} |" in text


def known_keys(value: Any, t: Any, where: str) -> None:
    """Every object key in ``value`` is a field of the Struct ``t`` describes there."""
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        assert isinstance(value, dict), where
        fields = {f.encode_name: f.type for f in msgspec.structs.fields(t)}
        tag_field = t.__struct_config__.tag_field
        for key, item in value.items():
            if key == tag_field:
                continue
            assert key in fields, f"{where}: {key!r} is not a field of {t.__name__}"
            known_keys(item, fields[key], f"{where}.{key}")
        return
    origin = typing.get_origin(t)
    if origin is list and isinstance(value, list):
        for i, item in enumerate(value):
            known_keys(item, typing.get_args(t)[0], f"{where}[{i}]")
    elif origin is dict and isinstance(value, dict):
        for key, item in value.items():
            known_keys(item, typing.get_args(t)[1], f"{where}.{key}")
    elif origin is not None and value is not None:
        for arg in typing.get_args(t):
            if (
                isinstance(arg, type)
                and issubclass(arg, msgspec.Struct)
                and isinstance(value, dict)
            ):
                known_keys(value, arg, where)


@pytest.mark.process
def test_recorded_messages_decode_into_their_types(
    generated: tuple[ModuleType, str, list[Any]],
) -> None:
    _, _, exchanges = generated
    for exchange in exchanges:
        method = exchange.step.method
        if exchange.sent is not None:
            spec = METHODS[method]
            params = exchange.sent.get("params", {})
            reply = exchange.reply
            assert reply is not None
            if reply.get("error", {}).get("code") == ErrorCode.INVALID_PARAMS:
                # The types refuse what the daemon refused.
                with pytest.raises(msgspec.ValidationError):
                    msgspec.convert(params, spec.params)
            else:
                msgspec.convert(params, spec.params)
                known_keys(params, spec.params, f"{method} params")
        for message in exchange.received:
            where = f"{method}: {message}"
            if "method" in message:  # a notification
                kind = NOTIFICATIONS[message["method"]]
                decoded = msgspec.convert(message["params"], kind)
                assert msgspec.to_builtins(decoded) == message["params"], where
            elif "error" in message:
                error = msgspec.convert(message["error"], ErrorObject)
                data = error.data
                if error.code >= 1000:
                    assert data["kind"] in spec.errors, f"{method} may fail with {data['kind']}"
                    assert KIND_CODES[data["kind"]] == error.code
                    typed = msgspec.convert(data, AnyErrorData)
                    assert isinstance(typed, ERROR_DATA[data["kind"]])
                    known_keys(data, ERROR_DATA[data["kind"]], where)
                else:
                    assert error.code == ErrorCode.INVALID_PARAMS, where
            else:
                # Results decode and re-encode to exactly what the daemon sent: the types
                # hold every member it uses.
                result = msgspec.convert(message["result"], spec.result)
                assert msgspec.to_builtins(result) == message["result"], where


@pytest.mark.process
def test_client_notification_examples_decode(
    generated: tuple[ModuleType, str, list[Any]],
) -> None:
    gen, _, _ = generated
    assert set(gen.CLIENT_NOTIFICATIONS) == set(NOTIFICATIONS) - SERVER_NOTIFICATIONS
    for name, params in gen.CLIENT_NOTIFICATIONS.items():
        msgspec.convert(params or {}, NOTIFICATIONS[name])


def test_schema_documents_methods_errors_and_notifications() -> None:
    schema = build_schema()
    assert set(ERROR_DATA) == set(KIND_CODES)
    assert set(schema["errorData"]) == set(KIND_CODES)
    for ref in schema["errorData"].values():
        assert ref["$ref"].removeprefix("#/$defs/") in schema["$defs"]
    docs = schema["documentation"]
    assert set(docs["methods"]) == set(METHODS)
    assert set(docs["notifications"]) == set(NOTIFICATIONS) == set(NOTIFICATION_SUMMARIES)
    for name, entry in docs["methods"].items():
        assert entry["summary"] and set(entry["errors"]) <= set(KIND_CODES), name
    directions = {n: e["direction"] for n, e in docs["notifications"].items()}
    assert {n for n, d in directions.items() if d == "serverToClient"} == SERVER_NOTIFICATIONS
