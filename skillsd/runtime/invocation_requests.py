"""``skills.invoke``: the user runs ``/name arguments`` (a skill, or a legacy command file)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillsd.core.discovery.fs_commands import CommandFile
from skillsd.core.errors import InvalidParamsData, SkillsdError
from skillsd.core.name_distance import closest_names
from skillsd.core.policy.permissions import (
    evaluate,
)
from skillsd.core.policy.sessions import Session
from skillsd.core.skill.fs_resources import list_skill_files, read_skill_file_content
from skillsd.core.skill.invocation import InvokedBody, TooLarge, invoke_body, parse_command
from skillsd.core.skill.skill_render import render_skill
from skillsd.runtime.caller import NOBODY, Caller, note_uses, view_for
from skillsd.runtime.gates import gate_load
from skillsd.runtime.remote_ready import remote_ready
from skillsd.runtime.request_view import (
    RequestView,
    resolve,
)
from skillsd.runtime.services import Services, View
from skillsd_protocol import SkillMetadata
from skillsd_protocol.errors import (
    NotUserInvocableData,
    SkillNotFoundData,
    TooLargeData,
)
from skillsd_protocol.messages import (
    Decision,
    InvokeParams,
    InvokeResult,
    RefParams,
)


async def invoke(
    svc: Services, params: InvokeParams, caller: Caller = NOBODY, *, seen: View | None = None
) -> InvokeResult:
    """``skills.invoke``: substitute off the loop (under the time limit), then record.
    ``seen``: the view this request took already (as
    :func:`~skillsd.runtime.loading_requests.read_file` says)."""
    view = seen if seen is not None else await view_for(svc, caller, params.cwd, params.session_id)
    command = (params.command or "").lstrip("/").split(maxsplit=1)
    target = RefParams(name=command[0]) if command else params
    await remote_ready(svc, view, target, deny_only=True)
    invocation = await svc.file_ops.run(invocation_of, view.seen, params)
    record_invocation(view.session, invocation)
    if isinstance(invocation.source, SkillMetadata):
        note_uses(svc, caller, view, "invoke", [invocation.source])
    return invocation.result


@dataclass(frozen=True, slots=True)
class InvokeOutcome:
    """A ``skills.invoke`` outcome: the reply, and what to record in the session."""

    result: InvokeResult
    #: The skill invoked, or the command file (the session takes its grants).
    source: SkillMetadata | CommandFile
    #: The repository whose trust the grants need (None: they count without it).
    trust_root: str | None


def _invoked(view: RequestView, params: InvokeParams) -> tuple[SkillMetadata | CommandFile, str]:
    """What an invocation names (a skill, else a command file of that name) and its raw
    arguments."""
    catalog = view.catalog
    ref: RefParams = params
    raw = params.arguments or ""
    if params.command is not None:
        name, raw = parse_command(params.command)
        if not name:
            raise SkillsdError(
                "`command` names no command: type `/name arguments`",
                InvalidParamsData(field="command"),
            )
        ref = RefParams(name=name)
    if ref.path is None and ref.id is None and ref.name is not None:
        named = catalog.named(ref.name)
        if not any(s.enabled for s in named):
            files = {f.name: f for f in catalog.commands.files}
            if ref.name in files:
                return files[ref.name], raw
            if not named:
                everything = [c.name for c in catalog.slash_commands()]
                suggestions = closest_names(ref.name, everything)
                hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
                raise SkillsdError(
                    f"no skill or command named {ref.name!r}{hint}",
                    SkillNotFoundData(suggestions=suggestions),
                )
    elif ref.path is None and ref.id is None:
        raise SkillsdError("give `command`, or one of `path`, `id` or `name`", InvalidParamsData())
    return resolve(catalog, ref), raw


def _bash_decision(view: RequestView) -> Callable[[str], Decision]:
    """The policy for dynamic-context commands: the daemon's check, or (the CLI) the config's
    rules alone."""
    check = view.check
    if check is not None:
        session = view.session
        return lambda command: check(session, "Bash", command).decision
    config = view.config
    policy = config.policy
    trusted = view.trusted
    return lambda command: evaluate(policy, "Bash", command, trusted=trusted).decision


def _substituted(
    view: RequestView,
    name: str,
    body: str,
    raw: str,
    *,
    argument_names: Sequence[str],
    skill_dir: str,
    session_id: str | None,
) -> InvokedBody:
    """The invoked body, refused before it is built when the reply would pass the config's
    ``limits.maxReplyBytes`` (the reply carries the body twice: rendered and substituted)."""
    limit = view.config.limits.max_reply_bytes
    try:
        return invoke_body(
            body,
            raw,
            decide=_bash_decision(view),
            argument_names=argument_names,
            skill_dir=skill_dir,
            session_id=session_id,
            max_bytes=limit // 2,
        )
    except TooLarge as exc:
        raise SkillsdError(
            f"invoking {name!r} with these arguments would build a reply of more than "
            f"{exc.size * 2} bytes, over limits.maxReplyBytes ({limit})",
            TooLargeData(limit=limit),
        ) from None


def invocation_of(view: RequestView, params: InvokeParams) -> InvokeOutcome:
    """``skills.invoke``: the user runs ``/name arguments``. ``ask`` does not apply (the user
    acts), a deny does; the body is always sent, its placeholders substituted and its dynamic
    context listed with each command's decision, never run. Reads files; records nothing
    (give the result to :func:`record_invocation`)."""
    target, raw = _invoked(view, params)
    if isinstance(target, SkillMetadata) and not target.invocation.user:
        raise SkillsdError(
            f"skill {target.name!r} is for the model only (its author set "
            "`user-invocable: false`): it cannot be invoked as a command",
            NotUserInvocableData(skill=target.name, path=target.path),
        )
    refusal = gate_load(view, target.name, action="invoking", deny_only=True)
    if refusal is not None:
        raise refusal
    fmt = params.format or "codelia"
    if isinstance(target, SkillMetadata):
        content = read_skill_file_content(target.path)
        host = target.host
        invoked = _substituted(
            view,
            target.name,
            content.body,
            raw,
            argument_names=(host.arguments if host is not None else None) or (),
            skill_dir=target.dir,
            session_id=params.session_id,
        )
        # The frontmatter as written, then the substituted body (what ``codelia`` shows).
        head = content.text[: len(content.text) - len(content.body)]
        files = list_skill_files(target.dir)
        rendered = render_skill(target, head + invoked.body, invoked.body, files, format=fmt)
        rules = target.allowed_tools or []
        needs_trust = view.catalog.grants_need_trust(target)
        skill, command = target, None
    else:
        invoked = _substituted(
            view,
            target.name,
            target.body,
            raw,
            argument_names=target.arguments or (),
            skill_dir=os.path.dirname(target.path),
            session_id=params.session_id,
        )
        # A command file is the text of a user message: there is no skill to wrap it in.
        rendered = invoked.body
        rules = target.allowed_tools or []
        # Only the user's own (home) commands are outside the repository's trust.
        needs_trust = target.path.startswith(view.catalog.repo_root.rstrip(os.sep) + os.sep)
        skill, command = None, target.as_command()
    grants = list(dict.fromkeys(rules))
    withheld = grants if needs_trust and not view.trusted else []
    result = InvokeResult(
        content=rendered,
        body=invoked.body,
        arguments=invoked.arguments,
        dynamic_context=invoked.dynamic_context,
        grants=[g for g in grants if g not in withheld],
        withheld_grants=withheld,
        skill=skill,
        command=command,
    )
    return InvokeOutcome(result, target, view.catalog.repo_root if needs_trust else None)


def record_invocation(session: Session | None, invocation: InvokeOutcome) -> None:
    """Remember an invocation in ``session`` like a load: a skill counts as loaded (this
    version), and the grants of what was invoked are taken (bound to the repository's trust
    where they need it)."""
    if session is None:
        return
    source = invocation.source
    if isinstance(source, SkillMetadata):
        session.record_load(source, invocation.trust_root)
    else:
        rules = source.allowed_tools or ()
        session.record_grants(source.path, source.name, rules, invocation.trust_root)
