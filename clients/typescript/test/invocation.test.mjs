// Claude Code-style skills end to end through the TypeScript client (docs/conformance.md): the fixture
// project of tests/fixtures/host_project (user-only, model-only and Codex openai.yaml skills,
// legacy .claude/commands), a real `skillsd serve`, commands(), invoke() and live updates.

import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { ErrorCodes, SkillsdError } from "../dist/index.js";
import { REPO, spawnDaemon, waitFor } from "./helpers.mjs";

function hostTree() {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), "skillsd-ts-host-")));
  const project = join(tmp, "project");
  cpSync(join(REPO, "tests", "fixtures", "host_project"), project, { recursive: true });
  mkdirSync(join(project, ".git"));
  const home = join(tmp, "home");
  mkdirSync(home);
  const config = join(tmp, "config.toml");
  writeFileSync(config, '[permissions]\nallow = ["skill_load", "Bash(git branch:*)"]\n');
  return { tmp, project, home, config, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}

describe("slash commands through the TypeScript client", () => {
  let tree;
  let client;
  before(() => {
    tree = hostTree();
    client = spawnDaemon(tree);
  });
  after(async () => {
    await client.close();
    tree.cleanup();
  });

  test("commands() lists user-invocable skills and command files", async () => {
    const { commands } = await client.commands({ cwd: tree.project });
    assert.deepEqual(
      commands.map((c) => `${c.source}:${c.name}`),
      ["skill:deploy", "skill:fix-issue", "command:frontend:component", "skill:release-notes", "command:review"],
    );
    const deploy = commands.find((c) => c.name === "deploy");
    assert.equal(deploy.argumentHint, "[staging|production]");
    assert.equal(commands.find((c) => c.name === "release-notes").displayName, "Release Notes");
  });

  test("the model never sees a user-only skill; the user lists it", async () => {
    const listed = await client.listSkills({ cwd: tree.project });
    const deploy = listed.skills.find((s) => s.name === "deploy");
    assert.deepEqual(deploy.invocation, { model: false, user: true });
    const prompt = await client.prompt({ cwd: tree.project });
    assert.ok(!prompt.text.includes("deploy"));
    assert.ok(prompt.text.includes("fix-issue"));
  });

  test("invoke() substitutes arguments, lists dynamic context and records the session", async () => {
    await client.request("session.open", { sessionId: "ts-1", cwd: tree.project });
    const result = await client.invoke({ command: "/deploy production", sessionId: "ts-1", cwd: tree.project });
    assert.deepEqual(result.arguments, ["production"]);
    assert.ok(result.body.includes("Deploy to production (default: staging)."));
    assert.ok(result.body.includes(`${join(tree.project, ".claude", "skills", "deploy")}/scripts/deploy.sh production`));
    assert.deepEqual(
      result.dynamicContext.map((d) => [d.command, d.decision, result.body.slice(d.start, d.end)]),
      [
        ["git branch --show-current", "allow", "!`git branch --show-current`"],
        ["git status --short", "ask", "!`git status --short`"],
      ],
    );
    // Not trusted yet: the skill's grants are withheld.
    assert.deepEqual(result.grants, []);
    assert.equal(result.withheldGrants.length, 2);
    const inspected = await client.inspect({ sessionId: "ts-1", cwd: tree.project });
    assert.deepEqual(inspected.session.loaded.map((s) => s.name), ["deploy"]);

    const command = await client.invoke({ name: "review", arguments: "error handling", cwd: tree.project });
    assert.equal(command.command.source, "command");
    assert.ok(command.body.trimEnd().endsWith("Focus on: error handling"));
  });

  test("a model-only skill is refused with not_user_invocable", async () => {
    let error;
    try {
      await client.invoke({ command: "/api-conventions", cwd: tree.project });
    } catch (caught) {
      error = caught;
    }
    assert.ok(error instanceof SkillsdError);
    assert.equal(error.kind, "not_user_invocable");
    assert.equal(error.code, ErrorCodes.NOT_USER_INVOCABLE);
  });

  test("a new command file arrives with skills.changed", async () => {
    const changed = waitFor(client, "skills.changed");
    writeFileSync(join(tree.project, ".claude", "commands", "standup.md"), "Summarise yesterday's commits.\n");
    const note = await changed;
    assert.equal(note.cwd, tree.project);
    const { commands } = await client.commands({ cwd: tree.project });
    assert.ok(commands.some((c) => c.name === "standup" && c.source === "command"));
  });
});
