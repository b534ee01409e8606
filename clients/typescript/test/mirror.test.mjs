// CatalogMirror (docs/embedding.md): a local catalog kept current from skills.changed + delta lists, equal
// to a fresh full list after a burst of random edits, against a real `skillsd serve`.

import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { CatalogMirror } from "../dist/index.js";
import { makeTree, spawnDaemon, writeSkill } from "./helpers.mjs";

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

function seeded(seed) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

test("the mirror equals a fresh full list after a burst of random edits", async () => {
  const mirror = await new CatalogMirror(client, tree.project).start();
  assert.equal(mirror.fullLists, 1);
  const root = join(tree.skills, "burst");
  mkdirSync(root);
  const random = seeded(11);
  const live = [];
  for (let n = 0; n < 50; n += 1) {
    let action = ["create", "create", "edit", "delete"][Math.floor(random() * 4)];
    if (action !== "create" && live.length === 0) action = "create";
    if (action === "create") {
      writeSkill(root, `burst-${n}`, `Burst skill ${n}.`);
      live.push(`burst-${n}`);
    } else {
      const name = live[Math.floor(random() * live.length)];
      if (action === "edit") {
        writeFileSync(join(root, name, "SKILL.md"), `---\nname: ${name}\ndescription: Edited ${random()}.\n---\nbody\n`);
      } else {
        rmSync(join(root, name), { recursive: true, force: true });
        live.splice(live.indexOf(name), 1);
      }
    }
    await sleep(Math.floor(random() * 30));
  }
  let fresh;
  for (let attempt = 0; attempt < 100; attempt += 1) {
    await sleep(200);
    fresh = await client.listSkills({ cwd: tree.project });
    await mirror.refresh();
    if (mirror.generation === fresh.generation) break;
  }
  assert.equal(mirror.generation, fresh.generation);
  assert.deepEqual(
    new Map([...mirror.skills].sort(([a], [b]) => a.localeCompare(b))),
    new Map(fresh.skills.map((s) => [s.id, s]).sort(([a], [b]) => a.localeCompare(b))),
  );
  assert.deepEqual(mirror.errors, fresh.errors);
  assert.ok(mirror.deltas > 0, "followed by deltas");
  mirror.stop();
});
