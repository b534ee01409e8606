// SkillsdClient.connect against a real `skillsd serve --socket PATH` shared by two clients.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chownSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { SkillsdClient, SkillsdError } from "../dist/index.js";
import { PYTHON, TEST_HOOKS, daemonEnv, makeTree, waitFor } from "./helpers.mjs";

let tree;
let daemon;
let socketPath;
let stderr = "";

/** Connect once the daemon listens (it binds the socket a moment after starting). */
async function connectWhenReady() {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await SkillsdClient.connect(socketPath);
    } catch (error) {
      if (daemon.exitCode !== null) throw new Error(`daemon exited ${daemon.exitCode}: ${stderr}`);
      if (!(error instanceof SkillsdError) || error.kind !== "connection_failed" || Date.now() > deadline)
        throw error;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

before(() => {
  tree = makeTree();
  const runtime = join(tree.tmp, "run");
  mkdirSync(runtime, { mode: 0o700 });
  socketPath = join(runtime, "skillsd.sock");
  daemon = spawn(PYTHON, ["-m", "skillsd", "serve", "--socket", socketPath], {
    cwd: tree.project,
    env: daemonEnv(tree, { SKILLSD_RUNTIME_DIR: runtime, SKILLSD_TEST_HOOKS: TEST_HOOKS }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  daemon.stderr.setEncoding("utf8");
  daemon.stderr.on("data", (text) => {
    stderr += text;
  });
});

after(async () => {
  if (daemon.exitCode === null && daemon.signalCode === null) {
    const exited = new Promise((r) => daemon.once("close", r));
    daemon.kill("SIGTERM");
    await exited;
  }
  tree.cleanup();
});

test("connecting to a path with no daemon fails with the path in the error", async () => {
  const missing = join(tree.tmp, "nobody.sock");
  await assert.rejects(SkillsdClient.connect(missing), (error) => {
    assert.ok(error instanceof SkillsdError);
    assert.equal(error.kind, "connection_failed");
    assert.ok(error.message.includes(missing), error.message);
    return true;
  });
});

test("two clients share the daemon; both hear skills.changed; one leaving spares the other", async () => {
  const first = await connectWhenReady();
  const second = await connectWhenReady();
  try {
    const [a, b] = await Promise.all([
      first.initialize({ clientInfo: { name: "first" } }),
      second.initialize({ clientInfo: { name: "second" } }),
    ]);
    assert.equal(a.serverInfo.name, "skillsd");
    assert.deepEqual(a.capabilities, b.capabilities);
    // The socket daemon's own cwd is not the editor's: requests name theirs.
    const listedA = await first.listSkills({ cwd: tree.project });
    const listedB = await second.listSkills({ cwd: tree.project });
    assert.deepEqual(
      listedA.skills.map((s) => s.id),
      listedB.skills.map((s) => s.id),
    );
    assert.equal(listedA.generation, listedB.generation);

    const heardA = waitFor(first, "skills.changed");
    const heardB = waitFor(second, "skills.changed");
    const target = join(tree.pdf, "SKILL.md");
    writeFileSync(target, readFileSync(target, "utf8").replace("Fill and inspect", "Fill and check"));
    const [noteA, noteB] = await Promise.all([heardA, heardB]);
    assert.deepEqual(noteA, noteB);
    assert.equal(noteA.cwd, tree.project);
    assert.deepEqual(noteA.changed, [listedA.skills[0].id]);

    const closed = await first.close();
    assert.equal(closed.exitCode, null);
    const found = await second.search({ query: "fill and check", cwd: tree.project });
    assert.equal(found.results[0].skill.name, "pdf-forms");
    assert.equal(found.results[0].skill.description, "Fill and check PDF forms.");
  } finally {
    first.dispose();
    second.dispose();
  }
});

const AS_ROOT = process.geteuid?.() === 0;

test(
  "a socket another user owns is refused before connecting, naming the path and the owner",
  { skip: !AS_ROOT && "needs root to give the socket to another user" },
  async () => {
    (await connectWhenReady()).dispose(); // the daemon is listening
    chownSync(socketPath, 65534, 65534);
    try {
      await assert.rejects(SkillsdClient.connect(socketPath), (error) => {
        assert.ok(error instanceof SkillsdError);
        assert.equal(error.kind, "connection_failed");
        assert.ok(error.message.includes(socketPath), error.message);
        assert.match(error.message, /owned by uid 65534, not by you \(uid 0\)/);
        return true;
      });
    } finally {
      chownSync(socketPath, 0, 0);
    }
    const ours = await SkillsdClient.connect(socketPath);
    assert.deepEqual(await ours.ping(), {});
    ours.dispose();
  },
);

test("pending requests are rejected when the socket daemon dies", async () => {
  const client = await connectWhenReady();
  const pending = client.call("_test.sleep", { seconds: 30 });
  assert.deepEqual(await client.ping(), {});
  daemon.kill("SIGKILL");
  await assert.rejects(pending, (error) => {
    assert.ok(error instanceof SkillsdError);
    assert.equal(error.kind, "connection_closed");
    assert.match(error.message, /_test\.sleep: no answer: skillsd socket .* closed the connection/);
    return true;
  });
  await client.closed;
  assert.equal(client.isClosed, true);
});
