"""The skillsd benchmark: run it with ``python bench/run.py`` (see ``bench/README.md``).

Modules, one concern each: ``corpus`` (the generated corpus and the edits and queries drawn
from it), ``contender`` (what a measured thing returns), ``baselines`` (what skillsd is compared
with), ``core_probes`` (skillsd's core in this process), ``stdio_peer`` (a JSON-RPC server
spawned on pipes), ``daemon_probes`` (the real ``skillsd serve``), ``cases`` (contenders, cases,
targets), ``measure`` (running a case), ``report`` (tables and JSON), ``run`` (the command line).
``gen_corpus`` and ``mcp_ping_server`` are standalone scripts.
"""
