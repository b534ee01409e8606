"""The language-neutral JSON Schema of the protocol, generated from the msgspec types.

``python -m skillsd_protocol.schema`` prints it; ``schema.json`` beside this file is the
checked-in copy (a test fails when it is stale).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from skillsd_protocol.errors import ERROR_DATA, KIND_CODES, ErrorCode, ErrorObject
from skillsd_protocol.methods import (
    METHODS,
    NOTIFICATION_SUMMARIES,
    NOTIFICATIONS,
    PROTOCOL_VERSION,
    SERVER_NOTIFICATIONS,
)

SCHEMA_PATH = Path(__file__).with_name("schema.json")


def _ref_name(t: Any) -> str:
    return t.__name__ if t is not None else "null"


def build_schema() -> dict[str, Any]:
    """Build the schema: every type under ``$defs`` and a method table pointing at them.

    ``errorObject`` is the JSON-RPC error object, ``errorData`` the ``data`` type of each error
    kind (tagged by ``kind``), and ``documentation`` each method's summary and error kinds and
    each notification's summary and direction."""
    types: list[Any] = []
    for spec in METHODS.values():
        types.append(spec.params)
        if spec.result is not None:
            types.append(spec.result)
    types.extend(NOTIFICATIONS.values())
    types.append(ErrorObject)
    types.extend(ERROR_DATA.values())
    _, components = msgspec.json.schema_components(types, ref_template="#/$defs/{name}")

    def ref(t: Any) -> dict[str, Any]:
        return {"type": "null"} if t is None else {"$ref": f"#/$defs/{_ref_name(t)}"}

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "skillsd protocol",
        "protocolVersion": PROTOCOL_VERSION,
        "methods": {
            name: {"params": ref(spec.params), "result": ref(spec.result)}
            for name, spec in METHODS.items()
        },
        "notifications": {name: {"params": ref(t)} for name, t in NOTIFICATIONS.items()},
        "errorCodes": {code.name: int(code) for code in ErrorCode},
        "errorKinds": {kind: int(code) for kind, code in KIND_CODES.items()},
        "errorObject": ref(ErrorObject),
        "errorData": {kind: ref(t) for kind, t in ERROR_DATA.items()},
        "documentation": {
            "methods": {
                name: {"summary": spec.summary, "errors": list(spec.errors)}
                for name, spec in METHODS.items()
            },
            "notifications": {
                name: {
                    "summary": NOTIFICATION_SUMMARIES[name],
                    "direction": (
                        "serverToClient" if name in SERVER_NOTIFICATIONS else "clientToServer"
                    ),
                }
                for name in NOTIFICATIONS
            },
        },
        "$defs": components,
    }


def render_schema() -> str:
    """The schema as the exact text checked in (sorted keys, 2-space indent, final newline)."""
    return json.dumps(build_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(render_schema(), end="")
