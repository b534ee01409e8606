// SkillsdClient against a real `skillsd serve` on stdio pipes.

import assert from "node:assert/strict";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import {
  CLIENT_INFO,
  ClientErrorCodes,
  ErrorCodes,
  METHOD_NAMES,
  PROTOCOL_VERSION,
  SkillsdClient,
  SkillsdError,
  defaultServeCommand,
} from "../dist/index.js";
import { PACKAGE_DIR, REPO, makeTree, spawnDaemon, waitFor } from "./helpers.mjs";


/** Every JSON message the daemon writes, seen by tapping its stdout beside the client. */
function tapStdout(client) {
  const messages = [];
  let partial = "";
  client.process.stdout.on("data", (chunk) => {
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop();
    for (const line of lines) if (line.trim()) messages.push(JSON.parse(line));
  });
  return messages;
}

async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the promise to reject");
}

describe("typed requests against a spawned daemon", () => {
  let tree;
  let client;
  before(() => {
    tree = makeTree();
    client = spawnDaemon(tree);
  });
  after(async () => {
    await client.close();
    tree.cleanup();
  });

  test("initialize reports the protocol this package was generated from", async () => {
    const info = await client.initialize({ clientInfo: { name: "node-test", version: "1" } });
    assert.equal(info.protocolVersion, PROTOCOL_VERSION);
    assert.equal(info.serverInfo.name, "skillsd");
    for (const method of METHOD_NAMES) assert.ok(info.capabilities.methods.includes(method), method);
    assert.ok(info.capabilities.notifications.includes("skills.changed"));
    assert.equal(client.serverInfo, info);
  });

  test("a cold list reports progress to onProgress, then lists scopes and errors", async () => {
    const progress = [];
    const listed = await client.listSkills({}, { onProgress: (value) => progress.push(value) });
    assert.ok(progress.length >= 2, JSON.stringify(progress));
    assert.equal(progress.at(-1).percentage, 100);
    assert.equal(listed.root, tree.project);
    assert.equal(listed.cwd, tree.project);
    assert.deepEqual(
      listed.skills.map((s) => [s.name, s.scope]),
      [
        ["pdf-forms", "repo"],
        ["release-notes", "repo"],
        ["commit-message", "user"],
      ],
    );
    const pdf = listed.skills[0];
    assert.deepEqual(pdf.resources, { scripts: 0, references: 1, assets: 1, other: 1 });
    assert.equal(pdf.metadata.tags, "pdf,forms");
    assert.deepEqual(
      listed.errors.map((e) => e.path),
      [join(tree.skills, "broken", "SKILL.md")],
    );
    assert.ok(listed.errors[0].diagnostics.some((d) => d.code === "description.missing"));
    const user = await client.listSkills({ scope: "user" });
    assert.deepEqual(
      user.skills.map((s) => s.name),
      ["commit-message"],
    );
  });

  test("search ranks, filters by tag and limits", async () => {
    const relevance = await client.search({ query: "fill forms" });
    assert.equal(relevance.results[0].skill.name, "pdf-forms");
    assert.equal(relevance.results[0].reason, "token_overlap");
    const exact = await client.search({ query: "release-notes" });
    assert.equal(exact.results[0].reason, "exact_name");
    const tagged = await client.search({ query: "forms", tags: ["pdf"] });
    assert.deepEqual(
      tagged.results.map((h) => h.skill.name),
      ["pdf-forms"],
    );
    const nothing = await client.search({ query: "forms", tags: ["no-such-tag"] });
    assert.equal(nothing.count, 0);
  });

  test("load in a session, reload reminder, unload", async () => {
    const { sessionId } = await client.openSession({ sessionId: "ts-session" });
    assert.equal(sessionId, "ts-session");
    const first = await client.load({ name: "pdf-forms", sessionId });
    assert.equal(first.alreadyLoaded, false);
    assert.equal(first.skill.name, "pdf-forms");
    assert.equal(first.baseDir, tree.pdf);
    assert.match(first.content, /Run scripts\/fill\.py/);
    assert.equal(first.body, "\n# PDF\nRun scripts/fill.py.\n");
    assert.ok(first.files.includes("references/fields.md"), first.files.join(", "));
    const again = await client.load({ name: "pdf-forms", sessionId });
    assert.equal(again.alreadyLoaded, true);
    assert.doesNotMatch(again.content, /Run scripts\/fill\.py/);
    const inspected = await client.inspect({ sessionId });
    assert.deepEqual(
      inspected.session.loaded.map((s) => s.name),
      ["pdf-forms"],
    );
    const unloaded = await client.unload({ name: "pdf-forms", sessionId });
    assert.equal(unloaded.unloaded, true);
    await client.closeSession({ sessionId });
  });

  test("readFile returns text and base64, and refuses to leave the skill", async () => {
    const text = await client.readFile({ name: "pdf-forms", file: "references/fields.md" });
    assert.equal(text.encoding, "utf-8");
    assert.equal(text.content, "# Fields\nf1: name\n");
    const binary = await client.readFile({ name: "pdf-forms", file: "assets/logo.bin" });
    assert.equal(binary.encoding, "base64");
    assert.deepEqual(
      [...Buffer.from(binary.content, "base64")],
      Array.from({ length: 256 }, (_, i) => i),
    );
    const escape = await rejection(client.readFile({ name: "pdf-forms", file: "escape.txt" }));
    assert.ok(escape instanceof SkillsdError);
    assert.equal(escape.kind, "path_not_allowed");
    assert.equal(escape.code, ErrorCodes.PATH_NOT_ALLOWED);
  });

  test("prompt, validate and tools come back typed", async () => {
    const prompt = await client.prompt({ format: "xml" });
    assert.match(prompt.text, /pdf-forms/);
    assert.equal(prompt.total, 3);
    const valid = await client.validate({ path: tree.pdf });
    assert.equal(valid.valid, true);
    const invalid = await client.validate({ path: join(tree.skills, "broken") });
    assert.equal(invalid.valid, false);
    assert.ok(invalid.diagnostics.some((d) => d.severity === "error"));
    const tools = await client.listTools();
    assert.ok(tools.tools.length > 0 && tools.tools.every((t) => typeof t.inputSchema === "object"));
  });

  test("daemon errors carry code, message and data.kind", async () => {
    const missing = await rejection(client.load({ name: "pdf-form" }));
    assert.ok(missing instanceof SkillsdError);
    assert.equal(missing.code, ErrorCodes.SKILL_NOT_FOUND);
    assert.equal(missing.kind, "skill_not_found");
    assert.ok(missing.is("skill_not_found") && !missing.is("ambiguous_skill"));
    assert.equal(missing.method, "skills.load");
    assert.ok(missing.data.suggestions.includes("pdf-forms"), JSON.stringify(missing.data));
    assert.match(missing.message, /pdf-form/);
    const badParams = await rejection(client.call("skills.search", { limit: 3 }));
    assert.equal(badParams.code, ErrorCodes.INVALID_PARAMS);
    assert.match(badParams.message, /query/);
    const unknown = await rejection(client.call("skills.nope"));
    assert.equal(unknown.code, ErrorCodes.METHOD_NOT_FOUND);
    // The connection is still fine after errors.
    assert.deepEqual(await client.ping(), {});
  });
});

test("a relative cwd means the caller's directory, not the daemon's", async () => {
  const tree = makeTree();
  // The daemon runs elsewhere, as a shared one does.
  const client = spawnDaemon(tree, { cwd: tree.tmp });
  const before = process.cwd();
  try {
    process.chdir(join(tree.project, ".agents"));
    const listed = await client.listSkills({ cwd: ".." });
    assert.equal(listed.cwd, tree.project);
    assert.ok(listed.skills.some((s) => s.name === "pdf-forms"));
    const hits = await client.search({ query: "pdf", cwd: "." });
    assert.ok(hits.results.some((h) => h.skill.name === "pdf-forms"));
  } finally {
    process.chdir(before);
    await client.close();
    tree.cleanup();
  }
});

test("close() lets the daemon exit 0 and later requests reject at once", async () => {
  const tree = makeTree();
  try {
    const client = spawnDaemon(tree);
    assert.deepEqual(await client.request("ping"), {});
    const info = await client.close();
    assert.equal(info.exitCode, 0);
    assert.equal(client.isClosed, true);
    const late = await rejection(client.ping());
    assert.equal(late.code, ClientErrorCodes.CONNECTION_CLOSED);
    assert.equal(late.kind, "connection_closed");
    assert.match(late.message, /exited with status 0/);
  } finally {
    tree.cleanup();
  }
});

describe("timeouts and cancellation", () => {
  let tree;
  let client;
  before(() => {
    tree = makeTree();
    client = spawnDaemon(tree, { hooks: true });
  });
  after(async () => {
    await client.close();
    tree.cleanup();
  });

  test("a timeout rejects, sends $/cancelRequest, and the daemon keeps serving", async () => {
    const seen = tapStdout(client);
    const error = await rejection(client.call("_test.sleep", { seconds: 30 }, { timeoutMs: 200 }));
    assert.ok(error instanceof SkillsdError);
    assert.equal(error.kind, "timeout");
    assert.equal(error.code, ErrorCodes.REQUEST_CANCELLED);
    assert.equal(error.data.timeoutMs, 200);
    // The daemon got the cancel: it answers the abandoned request with -32800 (which the client
    // drops, nobody waiting for it any more) long before the 30 s sleep would have ended.
    const started = Date.now();
    while (
      !seen.some((m) => m.error?.code === ErrorCodes.REQUEST_CANCELLED) &&
      Date.now() - started < 10_000
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const cancelled = seen.find((m) => m.error?.code === ErrorCodes.REQUEST_CANCELLED);
    assert.ok(cancelled, JSON.stringify(seen));
    assert.equal(typeof cancelled.id, "number");
    assert.deepEqual(await client.ping(), {});
    const listed = await client.listSkills();
    assert.equal(listed.skills.length, 3);
  });

  test("aborting a signal cancels; an aborted signal never sends", async () => {
    const controller = new AbortController();
    const pending = client.call("_test.sleep", { seconds: 30 }, { signal: controller.signal });
    controller.abort();
    const error = await rejection(pending);
    assert.equal(error.kind, "cancelled");
    assert.equal(error.code, ErrorCodes.REQUEST_CANCELLED);
    const early = await rejection(client.ping({ signal: AbortSignal.abort() }));
    assert.equal(early.kind, "cancelled");
    assert.deepEqual(await client.ping({ timeoutMs: 5000 }), {});
  });

  test("onProgress gets this request's reports only", async () => {
    const mine = [];
    const all = [];
    client.on("$/progress", (params) => all.push(params.token));
    const [result] = await Promise.all([
      client.call(
        "_test.sleep",
        { seconds: 0.2, steps: 4 },
        { onProgress: (value) => mine.push(value.message) },
      ),
      client.call("_test.sleep", { seconds: 0.1, steps: 2, _meta: { progressToken: "other" } }),
    ]);
    assert.deepEqual(result, { slept: 0.2, steps: 4 });
    assert.deepEqual(mine, ["step 1/4", "step 2/4", "step 3/4", "step 4/4"]);
    assert.ok(all.includes("other"));
  });
});

describe("a dying daemon", () => {
  let tree;
  before(() => {
    tree = makeTree();
  });
  after(() => tree.cleanup());

  test("rejects pending requests with its exit and last stderr lines", async () => {
    const client = spawnDaemon(tree, { hooks: true });
    const lines = [];
    client.on("stderr", (line) => lines.push(line));
    const crashed = await rejection(client.call("_test.crash"));
    assert.equal(crashed.code, ErrorCodes.INTERNAL_ERROR);
    // The traceback is on stderr (never stdout); wait until it has arrived.
    if (!lines.some((l) => l.includes("crashed on purpose"))) {
      await waitFor(client, "stderr", (line) => line.includes("crashed on purpose"));
    }
    const first = client.call("_test.sleep", { seconds: 30 });
    const second = client.call("_test.spin", { seconds: 30, steps: 300 });
    // Once ping is answered the daemon has read both requests: they are pending in it.
    assert.deepEqual(await client.ping(), {});
    client.process.kill("SIGKILL");
    for (const pending of [first, second]) {
      const error = await rejection(pending);
      assert.ok(error instanceof SkillsdError);
      assert.equal(error.code, ClientErrorCodes.CONNECTION_CLOSED);
      assert.equal(error.kind, "connection_closed");
      assert.equal(error.data.signal, "SIGKILL");
      assert.match(error.message, /killed by SIGKILL/);
      assert.match(error.message, /crashed on purpose/);
      assert.ok(error.data.stderr.some((l) => l.includes("RuntimeError")));
    }
    const info = await client.closed;
    assert.equal(info.signal, "SIGKILL");
  });

  test("a daemon that cannot start says why", async () => {
    const client = spawnDaemon(tree, { args: ["-m", "skillsd", "serve", "--no-such-flag"] });
    const error = await rejection(client.ping());
    assert.equal(error.kind, "connection_closed");
    assert.equal(error.data.exitCode, 2);
    assert.match(error.message, /exited with status 2/);
    assert.match(error.message, /--no-such-flag/);
  });

  test("a missing command rejects instead of hanging", async () => {
    const client = SkillsdClient.spawn({ command: join(tree.tmp, "no-such-skillsd"), args: [] });
    const error = await rejection(client.ping());
    assert.equal(error.kind, "connection_closed");
    assert.match(error.message, /ENOENT/);
  });

  test("dispose() rejects what is pending and the daemon goes away", async () => {
    const client = spawnDaemon(tree, { hooks: true });
    assert.deepEqual(await client.ping(), {});
    const pending = client.call("_test.sleep", { seconds: 30 });
    client.dispose();
    const error = await rejection(pending);
    assert.equal(error.kind, "connection_closed");
    assert.match(error.message, /disposed/);
    const later = await rejection(client.ping());
    assert.match(later.message, /disposed/);
    // The pending request was cancelled in the daemon too, so it exits in order on EOF.
    const info = await client.closed;
    assert.equal(info.exitCode, 0);
  });
});

test("skills.changed arrives after a SKILL.md is edited", async () => {
  const tree = makeTree();
  const client = spawnDaemon(tree);
  try {
    const before = await client.listSkills({ cwd: tree.project });
    assert.equal(before.generation, 1);
    const viaOn = new Promise((resolve) => {
      const registration = client.onNotification("skills.changed", (params) => {
        registration.dispose();
        resolve(params);
      });
    });
    const viaEvent = waitFor(client, "skills.changed");
    // An editor's atomic save: write a temporary file, rename it over SKILL.md.
    const target = join(tree.pdf, "SKILL.md");
    const swap = join(tree.pdf, ".SKILL.md.swp");
    writeFileSync(swap, readFileSync(target, "utf8").replace("Fill and inspect", "Fill, sign and inspect"));
    renameSync(swap, target);
    const note = await viaOn;
    assert.equal(note.cwd, tree.project);
    assert.equal(note.generation, 2);
    assert.deepEqual(note.changed, [before.skills[0].id]);
    assert.deepEqual([note.added, note.removed], [[], []]);
    assert.deepEqual(await viaEvent, note);
    const after = await client.listSkills({ cwd: tree.project });
    assert.equal(after.skills[0].description, "Fill, sign and inspect PDF forms.");
  } finally {
    await client.close();
    tree.cleanup();
  }
});

test("the default command is the repository's venv unless SKILLSD_PYTHON says otherwise", () => {
  assert.deepEqual(defaultServeCommand({ SKILLSD_PYTHON: "/opt/py" }), {
    command: "/opt/py",
    args: ["-m", "skillsd", "serve"],
  });
  const venv = join(REPO, ".venv", "bin", "python");
  const expected = existsSync(venv)
    ? { command: venv, args: ["-m", "skillsd", "serve"] }
    : { command: "skillsd", args: ["serve"] };
  assert.deepEqual(defaultServeCommand({}), expected);
});

test("CLIENT_INFO matches package.json", () => {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8"));
  assert.deepEqual(CLIENT_INFO, { name: pkg.name, version: pkg.version });
});
