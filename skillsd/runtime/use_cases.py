"""Every request's use case, for every face: the one door into the runtime.

The JSON-RPC daemon, the MCP bridge and the CLI decode their input into the params Struct,
call the use case here with a :class:`Caller` describing themselves, and encode or render its
result; nothing else. Each use case is written once, in the module of its concern:

- :mod:`~skillsd.runtime.catalog_requests`: list, commands, search, suggest, prompt, mentions,
  inspect;
- :mod:`~skillsd.runtime.loading_requests`: load, unload, readFile, the skills extension's
  contents and file lists;
- :mod:`~skillsd.runtime.invocation_requests`: invoke;
- :mod:`~skillsd.runtime.tool_requests`: the model's tool calls;
- :mod:`~skillsd.runtime.session_requests`: sessions;
- :mod:`~skillsd.runtime.policy_requests`: permissions, enable flags, workspace trust;
- :mod:`~skillsd.runtime.persona_requests`: personas;
- :mod:`~skillsd.runtime.diagnosis_requests`: the doctor report, the agents matrix;
- :mod:`~skillsd.runtime.validation_requests`: validate;
- :mod:`~skillsd.runtime.install_requests`: install, installed, update, remove, restore, scan;
- :mod:`~skillsd.runtime.usage_requests`: the use ledger's report;
- :mod:`~skillsd.runtime.listing_requests`: what each agent lists to its model, and profiles.
"""

from __future__ import annotations

from skillsd.runtime.caller import Caller, model_view
from skillsd.runtime.catalog_requests import (
    commands,
    inspect,
    list_skills,
    mentions,
    prompt,
    search,
    suggest,
)
from skillsd.runtime.diagnosis_requests import agents_matrix, doctor_report
from skillsd.runtime.install_requests import (
    install_skills,
    installed_skills,
    remove_skill,
    restore_skills,
    scan_skills,
    update_skills,
)
from skillsd.runtime.invocation_requests import invoke
from skillsd.runtime.listing_requests import listing as skills_listing
from skillsd.runtime.listing_requests import profile_apply, profile_plan, profile_reset
from skillsd.runtime.loading_requests import load, read_file, skill_contents, skill_files, unload
from skillsd.runtime.persona_requests import personas_get, personas_list
from skillsd.runtime.policy_requests import check, remember, set_enabled, trust_get, trust_set
from skillsd.runtime.session_requests import (
    close_session,
    compact_session,
    lease_session,
    open_session,
    release_sessions,
)
from skillsd.runtime.tool_requests import tools_call
from skillsd.runtime.usage_requests import usage_report
from skillsd.runtime.validation_requests import validate

__all__ = [
    "Caller",
    "agents_matrix",
    "check",
    "close_session",
    "commands",
    "compact_session",
    "doctor_report",
    "inspect",
    "install_skills",
    "installed_skills",
    "invoke",
    "lease_session",
    "list_skills",
    "load",
    "mentions",
    "model_view",
    "open_session",
    "personas_get",
    "personas_list",
    "profile_apply",
    "profile_plan",
    "profile_reset",
    "prompt",
    "read_file",
    "release_sessions",
    "remember",
    "remove_skill",
    "restore_skills",
    "scan_skills",
    "search",
    "set_enabled",
    "skill_contents",
    "skill_files",
    "skills_listing",
    "suggest",
    "tools_call",
    "trust_get",
    "trust_set",
    "unload",
    "update_skills",
    "usage_report",
    "validate",
]
