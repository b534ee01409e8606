"""JSON-RPC 2.0 on a byte stream: framing, the endpoint that dispatches and answers, the
router of methods, and the memory budget of buffered messages. Beneath the faces: the daemon
serves skillsd's own methods with it and the MCP bridge serves MCP's on stdio."""
