// `skillsd mcp` driven by the official MCP TypeScript SDK (Client + StdioClientTransport) from
// Node 20 (docs/mcp.md): tools, resources, prompts, the skills extension's skills/list, a
// list-changed notification after a file appears on disk, and one session per connection.

import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResultSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { PYTHON, daemonEnv, makeTree, writeSkill } from "./helpers.mjs";

let tree;
let client;
const changes = [];
before(async () => {
  tree = makeTree();
  const transport = new StdioClientTransport({
    command: PYTHON,
    args: ["-m", "skillsd", "mcp"],
    cwd: tree.project,
    env: daemonEnv(tree),
    stderr: "ignore",
  });
  client = new Client({ name: "skillsd-ts-test", version: "1.0.0" });
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => changes.push("resources"));
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => changes.push("prompts"));
  await client.connect(transport);
});
after(async () => {
  await client.close();
  tree.cleanup();
});

test("the skills extension is advertised and the tools answer", async () => {
  const capabilities = client.getServerCapabilities();
  assert.ok(capabilities.extensions?.["io.modelcontextprotocol/skills"] !== undefined);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ["skill_search", "skill_load", "skill_read_file"]);
  const found = await client.callTool({ name: "skill_search", arguments: { query: "pdf forms" } });
  assert.equal(found.isError, false);
  assert.match(found.content[0].text, /pdf-forms/);
});

test("resources list and read, traversal refused", async () => {
  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  assert.ok(uris.includes("skill://pdf-forms/SKILL.md"), uris.join(", "));
  const read = await client.readResource({ uri: "skill://pdf-forms/references/fields.md" });
  assert.match(read.contents[0].text, /^# Fields/);
  const binary = await client.readResource({ uri: "skill://pdf-forms/assets/logo.bin" });
  assert.equal(Buffer.from(binary.contents[0].blob, "base64").length, 256);
  await assert.rejects(client.readResource({ uri: "skill://pdf-forms/../../secret.txt" }), /-32602|not/);
});

test("prompts and skills/list", async () => {
  const { prompts } = await client.listPrompts();
  assert.ok(prompts.some((p) => p.name === "pdf-forms"));
  const prompt = await client.getPrompt({ name: "pdf-forms", arguments: { arguments: "form.pdf" } });
  assert.equal(prompt.messages[0].role, "user");
  assert.match(prompt.messages[0].content.text, /ARGUMENTS: form\.pdf/);
  const listed = await client.request({ method: "skills/list", params: {} }, ResultSchema);
  const pdf = listed.skills.find((s) => s.uri === "skill://pdf-forms/SKILL.md");
  assert.equal(pdf.frontmatter.name, "pdf-forms");
  assert.ok(pdf.resources.every((r) => r.digest.startsWith("sha256:") && r.size >= 0));
});

test("a new skill on disk sends list_changed", async () => {
  await sleep(500); // the watches are set up after the first reply
  mkdirSync(join(tree.skills, "late"), { recursive: true });
  writeSkill(join(tree.skills, "late"), "late-skill", "Written while the client listens.");
  for (let i = 0; i < 100 && !(changes.includes("resources") && changes.includes("prompts")); i += 1) {
    await sleep(50);
  }
  assert.ok(changes.includes("resources") && changes.includes("prompts"), changes.join(","));
  const { resources } = await client.listResources();
  assert.ok(resources.some((r) => r.uri === "skill://late-skill/SKILL.md"));
});

test("one stdio connection is one session: a prompt and a load count, a reload is suppressed", async () => {
  // pdf-forms was invoked as a prompt above: in the same session that counts as loaded.
  const invoked = await client.callTool({ name: "skill_load", arguments: { name: "pdf-forms" } });
  assert.match(invoked.content[0].text, /^<skill_context_reminder/);
  const first = await client.callTool({ name: "skill_load", arguments: { name: "release-notes" } });
  assert.equal(first.isError, false);
  assert.doesNotMatch(first.content[0].text, /^<skill_context_reminder/);
  for (let n = 0; n < 5; n++) await client.listTools(); // other requests in between
  const second = await client.callTool({ name: "skill_load", arguments: { name: "release-notes" } });
  assert.equal(second.isError, false);
  assert.match(second.content[0].text, /^<skill_context_reminder/);
});
