// The client's side of newline-delimited framing, against a scripted peer that does what
// skillsd never does (split writes, CRLF, junk, batches, requests to the client), and against
// the real daemon for the message size limit.

import assert from "node:assert/strict";
import { test } from "node:test";

import { SkillsdClient } from "../dist/index.js";
import { PYTHON, daemonEnv, makeTree, waitFor } from "./helpers.mjs";

// Answers each request line; what it writes for request N is chosen by the method name.
const PEER = String.raw`
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.method === undefined) {
    // A response from the client: report it back so the test can see it.
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "peer.saw", params: msg }) + "\n");
    return;
  }
  const reply = JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { echo: msg.params, text: "h\u00e9llo \u2603" } });
  if (msg.method === "split") {
    // A reply cut mid-way (inside a multi-byte character), ending in CRLF.
    const bytes = Buffer.from(reply + "\r\n");
    const cut = bytes.indexOf(Buffer.from("\u2603")) + 1;
    process.stdout.write(bytes.subarray(0, cut));
    setTimeout(() => process.stdout.write(bytes.subarray(cut)), 30);
  } else if (msg.method === "junk") {
    process.stdout.write("\n\nnot json\n" + JSON.stringify(42) + "\n" + reply + "\n");
  } else if (msg.method === "batch") {
    const note = { jsonrpc: "2.0", method: "skills.changed", params: { cwd: "/x", generation: 7, added: [], removed: [], changed: [] } };
    process.stdout.write(JSON.stringify([note, JSON.parse(reply)]) + "\n");
  } else if (msg.method === "ask") {
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: "q1", method: "client.question", params: {} }) + "\n" + reply + "\n");
  }
});
`;

function peer() {
  return SkillsdClient.spawn({ command: process.execPath, args: ["-e", PEER] });
}

test("replies split across writes, CRLF, junk lines, batches and peer requests", async () => {
  const client = peer();
  const problems = [];
  client.on("protocolError", (error) => problems.push(error.message));
  try {
    const split = await client.call("split", { n: 1 });
    assert.deepEqual(split, { echo: { n: 1 }, text: "h\u00e9llo \u2603" });

    const junk = await client.call("junk", { n: 2 });
    assert.deepEqual(junk.echo, { n: 2 });
    assert.equal(problems.length, 2, problems.join("; "));
    assert.match(problems[0], /not JSON .*: not json/);
    assert.match(problems[1], /not a JSON-RPC message: 42/);

    const changed = waitFor(client, "skills.changed");
    const batch = await client.call("batch", { n: 3 });
    assert.deepEqual(batch.echo, { n: 3 });
    assert.equal((await changed).generation, 7);

    // The peer's request to the client is refused (the client serves no methods), and the
    // refusal reaches the peer as an ordinary message: it reports what it received.
    const saw = new Promise((resolve) => client.onNotification("peer.saw", resolve));
    await client.call("ask", {});
    const answer = await saw;
    assert.equal(answer.id, "q1");
    assert.equal(answer.error.code, -32601);
    assert.match(answer.error.message, /client\.question/);
  } finally {
    await client.close();
  }
});

test("a message over maxMessageBytes drops the connection with a clear error", async () => {
  const tree = makeTree();
  const client = SkillsdClient.spawn({
    command: PYTHON,
    args: ["-m", "skillsd", "serve"],
    cwd: tree.project,
    env: daemonEnv(tree),
    maxMessageBytes: 300,
  });
  try {
    assert.deepEqual(await client.ping(), {});
    const problem = waitFor(client, "protocolError");
    await assert.rejects(client.listSkills(), (error) => {
      assert.equal(error.kind, "connection_closed");
      assert.match(error.message, /longer than 300 bytes/);
      return true;
    });
    assert.match((await problem).message, /longer than 300 bytes/);
    await client.closed;
    assert.equal(client.isClosed, true);
  } finally {
    client.dispose();
    tree.cleanup();
  }
});
