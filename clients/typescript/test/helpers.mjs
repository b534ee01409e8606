// Shared by the tests: where the repo and its Python are, and an isolated skill tree per test.

import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { SkillsdClient } from "../dist/index.js";

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO = resolve(PACKAGE_DIR, "../..");
/** The interpreter that runs the daemon: `$SKILLSD_PYTHON`, else the repo's `.venv`. */
export const PYTHON = process.env.SKILLSD_PYTHON || join(REPO, ".venv", "bin", "python");
/** `SKILLSD_TEST_HOOKS`: the file of test-only `_test.*` methods the daemon then loads. */
export const TEST_HOOKS = join(REPO, "tests", "daemon", "hook_methods.py");

/** Write `root/name/SKILL.md`; returns the skill directory. */
export function writeSkill(root, name, description, { extra = "", body = "Do the thing.\n" } = {}) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const base = name.split("/").pop();
  writeFileSync(
    join(dir, "SKILL.md"),
    `---\nname: ${base}\ndescription: ${description}\n${extra}---\n\n${body}`,
  );
  return dir;
}

/**
 * A project (a git root with repo skills, one broken) and a home with user skills, in a fresh
 * temporary directory; `cleanup()` removes it. The config allows `skill_load` outright, as a
 * host that does not prompt its user would ship it.
 */
export function makeTree() {
  // realpath: the daemon reports real paths, and the temp dir may sit behind a symlink.
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), "skillsd-ts-")));
  const project = join(tmp, "project");
  mkdirSync(join(project, ".git"), { recursive: true });
  const skills = join(project, ".agents", "skills");
  const pdf = writeSkill(skills, "pdf-forms", "Fill and inspect PDF forms.", {
    extra: "metadata:\n  tags: pdf,forms\n",
    body: "# PDF\nRun scripts/fill.py.\n",
  });
  mkdirSync(join(pdf, "references"));
  writeFileSync(join(pdf, "references", "fields.md"), "# Fields\nf1: name\n");
  mkdirSync(join(pdf, "assets"));
  writeFileSync(join(pdf, "assets", "logo.bin"), Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
  writeFileSync(join(tmp, "secret.txt"), "top secret");
  symlinkSync(join(tmp, "secret.txt"), join(pdf, "escape.txt"));
  writeSkill(join(skills, "release"), "release-notes", "Draft release notes from merged PRs.");
  mkdirSync(join(skills, "broken"));
  writeFileSync(join(skills, "broken", "SKILL.md"), "---\nname: Broken\n---\nno description\n");
  const home = join(tmp, "home");
  writeSkill(join(home, ".agents", "skills"), "commit-message", "Write a conventional commit message.");
  const config = join(tmp, "config.toml");
  writeFileSync(config, '[permissions]\nallow = ["skill_load"]\n');
  return {
    tmp,
    project,
    skills,
    pdf,
    home,
    config,
    cleanup: () => rmSync(tmp, { recursive: true, force: true }),
  };
}

/** The daemon's environment for `tree`: HOME, config, state and runtime dir inside it. */
export function daemonEnv(tree, extra = {}) {
  const env = { ...process.env };
  for (const name of ["SKILLSD_ROOT", "AGENT_SKILLS_PATH", "SKILLSD_RUNTIME_DIR", "SKILLSD_TEST_HOOKS", "CODEX_HOME"]) {
    delete env[name];
  }
  return {
    ...env,
    HOME: tree.home,
    SKILLSD_CONFIG: tree.config,
    XDG_STATE_HOME: join(tree.tmp, "state"),
    XDG_CONFIG_HOME: join(tree.tmp, "xdg-config"),
    ...extra,
  };
}

/** Resolve with the first `event` emitted by `emitter` that `accept`s, or reject after `ms`. */
export function waitFor(emitter, event, accept = () => true, ms = 10_000) {
  return new Promise((resolvePromise, rejectPromise) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      rejectPromise(new Error(`no ${event} within ${ms} ms`));
    }, ms);
    function listener(...args) {
      if (!accept(...args)) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolvePromise(args.length > 1 ? args : args[0]);
    }
    emitter.on(event, listener);
  });
}

/** A `SkillsdClient` on a fresh `skillsd serve` (stdio) for `tree`; `hooks` loads the test-only
 * `_test.*` methods, `args` replaces the daemon's arguments, other options go to `spawn`. */
export function spawnDaemon(tree, { hooks = false, args, ...options } = {}) {
  return SkillsdClient.spawn({
    command: PYTHON,
    args: args ?? ["-m", "skillsd", "serve"],
    cwd: tree.project,
    env: daemonEnv(tree, hooks ? { SKILLSD_TEST_HOOKS: TEST_HOOKS } : {}),
    ...options,
  });
}
