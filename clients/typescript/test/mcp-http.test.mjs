// `skillsd mcp --http` (the native streamable HTTP server) driven by the official MCP TypeScript
// SDK's Client + StreamableHTTPClientTransport from Node 20 (docs/mcp.md): the bearer token,
// tools, resources, prompts, DELETE ending a session (a request on it is then 404), and a
// request without the token refused (401).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { connect, createServer } from "node:net";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { PYTHON, daemonEnv, makeTree } from "./helpers.mjs";

const TOKEN = "skillsd-ts-test-token-0123456789abcdefghijklmnop"; // 32+ printable characters
const READY_MS = 10_000;
// No GET-stream reconnection timers left behind once the server ends a stream.
const NO_RECONNECT = {
  initialReconnectionDelay: 1,
  maxReconnectionDelay: 1,
  reconnectionDelayGrowFactor: 1,
  maxRetries: 0,
};

let tree;
let server;
let stderr = "";
let url;
const clients = [];

/** A port nothing listens on now (the OS picks it; closed again before the server binds it). */
async function freePort() {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address();
  probe.close();
  await once(probe, "close");
  return port;
}

/** Resolve once `port` accepts a TCP connection; reject if `child` exits or after `ms`. */
async function waitForPort(child, port, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      // Its last words may still be in the pipe when the exit is seen.
      if (!child.stderr.readableEnded) await Promise.race([once(child.stderr, "end"), sleep(500)]);
      const status = child.exitCode ?? child.signalCode;
      throw new Error(`skillsd mcp --http exited (${status}) before listening on ${port}; stderr:\n${stderr}`);
    }
    const accepted = await new Promise((resolvePromise) => {
      const socket = connect({ host: "127.0.0.1", port });
      socket.once("connect", () => {
        socket.destroy();
        resolvePromise(true);
      });
      socket.once("error", () => resolvePromise(false));
    });
    if (accepted) return;
    if (Date.now() > deadline) {
      throw new Error(`skillsd mcp --http did not listen on ${port} within ${ms} ms; stderr:\n${stderr}`);
    }
    await sleep(50);
  }
}

/** A connected SDK client; `token` null sends no Authorization header. */
async function connectClient({ token = TOKEN, sessionId, protocolVersion } = {}) {
  const headers = token === null ? {} : { Authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    reconnectionOptions: NO_RECONNECT,
    sessionId,
  });
  if (protocolVersion) transport.setProtocolVersion(protocolVersion);
  const client = new Client({ name: "skillsd-ts-http-test", version: "1.0.0" });
  client.onerror = () => {}; // GET-stream ends are reported here; the assertions look at requests
  clients.push(client);
  await client.connect(transport);
  return { client, transport };
}

before(async () => {
  tree = makeTree();
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  server = spawn(PYTHON, ["-m", "skillsd", "mcp", "--http", `127.0.0.1:${port}`], {
    cwd: tree.project,
    env: daemonEnv(tree, { SKILLSD_MCP_TOKEN: TOKEN }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  server.stderr.setEncoding("utf8");
  server.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-16_384);
  });
  server.on("error", (error) => {
    stderr += `\nspawn ${PYTHON}: ${error.message}`;
  });
  await waitForPort(server, port, READY_MS);
});

after(async () => {
  for (const client of clients) await client.close().catch(() => {});
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = once(server, "exit");
    server.kill("SIGTERM");
    const gone = await Promise.race([exited.then(() => true), sleep(3_000).then(() => false)]);
    if (!gone) {
      server.kill("SIGKILL");
      await exited;
    }
  }
  tree?.cleanup();
});

test("over HTTP with the token: server info, tools, resources, prompts; DELETE ends the session", async () => {
  const { client, transport } = await connectClient();
  assert.equal(client.getServerVersion()?.name, "skillsd");
  const sessionId = transport.sessionId;
  assert.ok(sessionId, "the initialize reply carries an Mcp-Session-Id");

  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === "skill_search"), tools.map((t) => t.name).join(", "));

  const { resources } = await client.listResources();
  assert.ok(resources.length > 0, "resources/list is not empty");
  const read = await client.readResource({ uri: resources[0].uri });
  assert.equal(typeof read.contents[0].text, "string", `${resources[0].uri} read as text`);
  assert.ok(read.contents[0].text.length > 0);

  const found = await client.callTool({ name: "skill_search", arguments: { query: "pdf forms" } });
  assert.equal(found.isError, false);
  assert.equal(found.content[0].type, "text");
  assert.match(found.content[0].text, /pdf-forms/);

  const { prompts } = await client.listPrompts();
  assert.ok(Array.isArray(prompts));
  assert.ok(prompts.some((p) => p.name === "pdf-forms"), prompts.map((p) => p.name).join(", "));

  const protocolVersion = transport.protocolVersion;
  await transport.terminateSession();
  assert.equal(transport.sessionId, undefined);

  // The same session id, as a client that resumes it would send it: the server no longer knows it.
  const { client: resumed } = await connectClient({ sessionId, protocolVersion });
  await assert.rejects(resumed.listTools(), (error) => {
    assert.ok(error instanceof StreamableHTTPError, String(error));
    assert.equal(error.code, 404, error.message);
    return true;
  });
});

test("without the token, or with a wrong one, the request is refused with 401", async () => {
  for (const token of [null, `${TOKEN}-wrong`]) {
    await assert.rejects(connectClient({ token }), (error) => {
      assert.ok(error instanceof StreamableHTTPError, String(error));
      assert.equal(error.code, 401, error.message);
      return true;
    });
  }
});
