// A VS Code extension's view: vscode-jsonrpc's stock Content-Length reader and writer on the
// daemon's pipes, nothing adapted. The daemon must notice the LSP framing by itself.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import rpc from "vscode-jsonrpc/node";

import { ErrorCodes } from "../dist/index.js";
import { PYTHON, TEST_HOOKS, daemonEnv, makeTree } from "./helpers.mjs";

const {
  CancellationTokenSource,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} = rpc;

test("vscode-jsonrpc talks to skillsd over Content-Length framing", async () => {
  const tree = makeTree();
  const proc = spawn(PYTHON, ["-m", "skillsd", "serve"], {
    cwd: tree.project,
    env: daemonEnv(tree, { SKILLSD_TEST_HOOKS: TEST_HOOKS }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => proc.once("close", (code) => resolve(code)));
  const connection = createMessageConnection(
    new StreamMessageReader(proc.stdout),
    new StreamMessageWriter(proc.stdin),
  );
  let changed;
  const firstChange = new Promise((resolve) => {
    changed = resolve;
  });
  connection.onNotification("skills.changed", (params) => {
    changed(params);
  });
  connection.listen();
  try {
    const init = await connection.sendRequest("initialize", {
      processId: process.pid,
      clientInfo: { name: "vscode-jsonrpc-test" },
    });
    assert.equal(init.serverInfo.name, "skillsd");
    assert.ok(init.capabilities.notifications.includes("skills.changed"));
    await connection.sendNotification("initialized", {});

    const listed = await connection.sendRequest("skills.list", { cwd: tree.project });
    assert.deepEqual(
      listed.skills.map((s) => s.name),
      ["pdf-forms", "release-notes", "commit-message"],
    );

    // Errors arrive as ResponseError with the daemon's code and data.
    await assert.rejects(
      connection.sendRequest("skills.load", { name: "pdf-form", cwd: tree.project }),
      (error) => {
        assert.ok(error instanceof ResponseError);
        assert.equal(error.code, ErrorCodes.SKILL_NOT_FOUND);
        assert.equal(error.data.kind, "skill_not_found");
        return true;
      },
    );

    // vscode-jsonrpc's own cancellation sends $/cancelRequest; the daemon answers -32800.
    const source = new CancellationTokenSource();
    const slow = connection.sendRequest("_test.sleep", { seconds: 30 }, source.token);
    setTimeout(() => source.cancel(), 50);
    await assert.rejects(slow, (error) => {
      assert.equal(error.code, ErrorCodes.REQUEST_CANCELLED);
      return true;
    });
    assert.deepEqual(await connection.sendRequest("ping", {}), {});

    const target = join(tree.pdf, "SKILL.md");
    const swap = join(tree.pdf, ".SKILL.md.tmp");
    writeFileSync(swap, readFileSync(target, "utf8").replace("Fill and inspect", "Fill and review"));
    renameSync(swap, target);
    const note = await firstChange;
    assert.equal(note.cwd, tree.project);
    assert.deepEqual(note.changed, [listed.skills[0].id]);

    assert.equal(await connection.sendRequest("shutdown", {}), null);
    await connection.sendNotification("exit", {});
    assert.equal(await exited, 0, stderr);
  } finally {
    connection.dispose();
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    tree.cleanup();
  }
});
