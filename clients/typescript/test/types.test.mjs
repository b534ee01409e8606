// The typed API compiles where it should and refuses what the protocol does not allow.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";

import { PACKAGE_DIR } from "./helpers.mjs";

test("test/types/usage.ts type-checks, @ts-expect-error lines included", () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(
    process.execPath,
    [tsc, "-p", join(PACKAGE_DIR, "test", "types", "tsconfig.json")],
    {
      encoding: "utf8",
    },
  );
  assert.equal(result.status, 0, result.stdout + result.stderr);
});
