// examples/client_demo.mjs runs against the built client and shows list, search and load.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

import { REPO } from "./helpers.mjs";

test("examples/client_demo.mjs lists, searches, loads and reads", async () => {
  const env = { ...process.env };
  for (const name of ["SKILLSD_ROOT", "AGENT_SKILLS_PATH", "SKILLSD_CONFIG", "XDG_STATE_HOME"])
    delete env[name];
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(REPO, "examples", "client_demo.mjs")],
    {
      cwd: REPO,
      env,
      timeout: 60_000,
    },
  );
  const listing = stdout.split("== skills.list\n")[1].split("\n\n")[0].split("\n");
  assert.deepEqual(listing.slice(0, 7), [
    "  repo  pdf-forms (shares its name with another skill)",
    "  repo  changelog-check",
    "  repo  release-notes",
    "  repo  code-review",
    "  repo  fix-issue",
    "  user  commit-message",
    "  user  pdf-forms (shares its name with another skill)",
  ]);
  assert.match(listing[7], /^  invalid: .*broken-skill\/SKILL\.md: /);
  assert.match(stdout, /== skills\.search "release notes"\n  release-notes: token_overlap/);
  assert.match(stdout, /<skill_context name="changelog-check"/);
  assert.match(stdout, /loaded again: alreadyLoaded=true\n<skill_context_reminder name="changelog-check"/);
  assert.match(stdout, /\| `f1_01` \| first name \|/);
});
