// The README's usage example runs as printed: a fresh project installs the client from the
// repository (`npm install <clone>/clients/typescript`), and `node index.mjs` runs the example
// with an empty config (so the load asks and the example answers): in a project with skills, in
// the fresh project itself with only the user's skills, and there with no skill at all.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { PACKAGE_DIR, PYTHON, daemonEnv, makeTree } from "./helpers.mjs";

const README = readFileSync(join(PACKAGE_DIR, "README.md"), "utf8");

test("the README's install command and usage example work as printed", () => {
  const blocks = [...README.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.equal(blocks.length, 1);
  assert.match(README, /npm install \/path\/to\/skillsd\/clients\/typescript/);
  const tree = makeTree();
  try {
    writeFileSync(tree.config, ""); // no configuration: every load asks
    const app = join(tree.tmp, "my-extension");
    execFileSync("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), '{"name": "my-extension", "private": true, "type": "module"}\n');
    execFileSync("npm", ["install", "--no-audit", "--no-fund", PACKAGE_DIR], { cwd: app, stdio: "pipe" });
    writeFileSync(join(app, "index.mjs"), blocks[0]);
    const run = (home) =>
      execFileSync("node", ["index.mjs"], {
        cwd: app,
        env: daemonEnv(tree, { SKILLSD_PYTHON: PYTHON, HOME: home }),
        encoding: "utf8",
        timeout: 60000,
      });
    // The example's workspace is process.cwd(): run it from the project with `cwd`.
    const inProject = execFileSync("node", [join(app, "index.mjs")], {
      cwd: tree.project,
      env: daemonEnv(tree, { SKILLSD_PYTHON: PYTHON }),
      encoding: "utf8",
      timeout: 60000,
    }).trimEnd().split("\n");
    assert.equal(inProject[0], "3 skills; best match: release-notes");
    assert.match(inProject[1], /^<skill_context name="release-notes"/);
    assert.match(inProject[2], /^resource_not_found: /);

    // In the fresh project: the user's one skill is the first listed, and is loaded.
    const fresh = run(tree.home).trimEnd().split("\n");
    assert.match(fresh[0], /^1 skills; best match: (none|commit-message)$/);
    assert.match(fresh[1], /^<skill_context name="commit-message"/);
    assert.match(fresh[2], /^resource_not_found: /);

    // No skill anywhere: it says so, and exits 0.
    const emptyHome = join(tree.tmp, "empty-home");
    mkdirSync(emptyHome);
    const none = run(emptyHome).trimEnd().split("\n");
    assert.deepEqual(none, [
      "0 skills; best match: none",
      "no skills found: add one as .agents/skills/<name>/SKILL.md and run this again",
    ]);
  } finally {
    tree.cleanup();
  }
});
