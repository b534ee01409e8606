// The README's usage example runs as printed: a fresh project installs the client from the
// repository (`npm install <clone>/clients/typescript`), and `node` runs the example in a
// workspace whose config is empty, so the load asks and the example answers.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
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
    writeFileSync(join(app, "example.mjs"), blocks[0]);
    const out = execFileSync("node", [join(app, "example.mjs")], {
      cwd: tree.project,
      env: daemonEnv(tree, { SKILLSD_PYTHON: PYTHON }),
      encoding: "utf8",
      timeout: 60000,
    });
    const lines = out.trimEnd().split("\n");
    assert.equal(lines[0], "3 skills; best match: release-notes");
    assert.match(lines[1], /^<skill_context name="release-notes"/);
    assert.match(lines[2], /^resource_not_found: /);
  } finally {
    tree.cleanup();
  }
});
