"""The runtime beneath every face: the services a process holds (catalog cache and watcher,
sessions, policy, trust, state, file-operation slots) and each request's use case, written
once (:mod:`skillsd.runtime.use_cases`). The JSON-RPC daemon, the MCP bridge, the CLI and the
TUI translate to and from it; it imports none of them."""
