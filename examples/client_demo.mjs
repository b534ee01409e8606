#!/usr/bin/env node
// The TypeScript client on the bundled example project: list, search and load skills.
//
//   cd clients/typescript && npm ci && npm run build   (once)
//   node examples/client_demo.mjs
//
// Like examples/demo.py, the daemon sees only examples/project and examples/home: HOME, the
// config file and the state directory are pointed there (config and state in a temp dir).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const PROJECT = join(HERE, "project");
const HOME = join(HERE, "home");

let SkillsdClient;
try {
  ({ SkillsdClient } = await import("../clients/typescript/dist/index.js"));
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
  console.error("Build the client first: cd clients/typescript && npm ci && npm run build");
  process.exit(2);
}

function environment(state) {
  const env = {
    ...process.env,
    SKILLSD_ROOT: PROJECT,
    HOME,
    SKILLSD_CONFIG: join(state, "config.toml"),
    XDG_STATE_HOME: join(state, "state"),
  };
  delete env.AGENT_SKILLS_PATH;
  return env;
}

function show(text, limit = 400) {
  console.log(text.length <= limit ? text : `${text.slice(0, limit)}... [${text.length} chars]`);
}

async function main() {
  const state = mkdtempSync(join(tmpdir(), "skillsd-client-demo-"));
  // Loads ask the user by default (docs/permissions.md); this host, like most, allows them outright.
  writeFileSync(join(state, "config.toml"), '[permissions]\nallow = ["skill_load"]\n');
  const client = SkillsdClient.spawn({ cwd: PROJECT, env: environment(state), defaultTimeoutMs: 30_000 });
  try {
    const info = await client.initialize({ clientInfo: { name: "client-demo" } });
    console.log(`== ${info.serverInfo.name} ${info.serverInfo.version}, protocol ${info.protocolVersion}`);

    console.log("\n== skills.list");
    const listed = await client.listSkills();
    for (const skill of listed.skills) {
      const same = skill.sameName?.length ? " (shares its name with another skill)" : "";
      console.log(`  ${skill.scope.padEnd(5)} ${skill.name}${same}`);
    }
    for (const error of listed.errors) console.log(`  invalid: ${error.path}: ${error.message}`);

    console.log('\n== skills.search "release notes"');
    const found = await client.search({ query: "release notes", limit: 3 });
    for (const hit of found.results) {
      console.log(`  ${hit.skill.name}: ${hit.reason} (${hit.score.toFixed(2)})`);
    }

    console.log("\n== skills.load changelog-check");
    const { sessionId } = await client.openSession({ sessionId: "client-demo" });
    const first = await client.load({ name: "changelog-check", sessionId });
    show(first.content);
    const again = await client.load({ name: "changelog-check", sessionId });
    console.log(`\n  loaded again: alreadyLoaded=${again.alreadyLoaded}`);
    show(again.content);

    console.log("\n== skills.readFile pdf-forms references/fields.md");
    const pdf = listed.skills.find((skill) => skill.name === "pdf-forms" && skill.scope === "repo");
    const file = await client.readFile({ id: pdf.id, file: "references/fields.md" });
    show(file.content, 200);
  } finally {
    await client.close();
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
