// Installing skills through SkillsdClient against a real `skillsd serve`.

import assert from "node:assert/strict";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { ErrorCodes, SkillsdError } from "../dist/index.js";
import { makeTree, spawnDaemon, writeSkill } from "./helpers.mjs";

describe("install, installed, scan, remove", () => {
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

  test("a folder's skill is placed, linked for Claude Code, locked and removed", async () => {
    const vendor = join(tree.tmp, "vendor");
    writeSkill(vendor, "tidy-imports", "Sort and group imports.");
    const progress = [];
    const result = await client.install(
      { source: vendor, agents: ["claude-code"] },
      { onProgress: (value) => progress.push(value.message) },
    );
    assert.deepEqual(result.installed.map((s) => s.name), ["tidy-imports"]);
    assert.ok(progress.includes("copying tidy-imports"));
    const link = join(tree.project, ".claude", "skills", "tidy-imports");
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.match(readFileSync(join(link, "SKILL.md"), "utf8"), /Sort and group imports/);
    const lock = JSON.parse(readFileSync(join(tree.project, "skills-lock.json"), "utf8"));
    assert.equal(lock.skills["tidy-imports"].sourceType, "local");

    const listed = await client.installed();
    assert.deepEqual(listed.skills.map((s) => [s.name, s.status]), [["tidy-imports", "ok"]]);
    const scanned = await client.scan({ path: ".agents/skills/tidy-imports" });
    assert.deepEqual(scanned.findings, []);

    const removed = await client.remove({ name: "tidy-imports" });
    assert.equal(removed.removed.length, 2);
    assert.ok(!existsSync(link));
    const error = await client.remove({ name: "tidy-imports" }).catch((e) => e);
    assert.ok(error instanceof SkillsdError);
    assert.equal(error.code, ErrorCodes.NOT_INSTALLED);
  });
});
