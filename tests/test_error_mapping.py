"""One error mapping for every face: the daemon's endpoint and the MCP bridge send a refusal of
the runtime with the same code (``skillsd.jsonrpc.rpc_errors.code_of``)."""

from __future__ import annotations

from skillsd.core.errors import InvalidParamsData, SkillsdError, UnknownToolData
from skillsd.jsonrpc.rpc_errors import code_of
from skillsd.mcp_bridge.mcp_results import failure
from skillsd_protocol import KIND_CODES, ErrorCode
from skillsd_protocol.errors import PermissionDeniedData, SkillNotFoundData


def test_every_face_sends_one_code_per_kind() -> None:
    refusals = [
        SkillsdError("no such skill", SkillNotFoundData(suggestions=[])),
        SkillsdError("denied", PermissionDeniedData(skill="x", layer="deny", rule="skill_load(x)")),
        SkillsdError("bad limit", InvalidParamsData(field="limit")),
        # A kind with no code of its own: the server's fault, -32603 on both faces.
        SkillsdError("unknown tool", UnknownToolData()),
    ]
    codes = [code_of(e) for e in refusals]
    assert codes == [
        KIND_CODES["skill_not_found"],
        KIND_CODES["permission_denied"],
        ErrorCode.INVALID_PARAMS,
        ErrorCode.INTERNAL_ERROR,
    ]
    assert [failure(e).code for e in refusals] == [int(c) for c in codes]
