/**
 * A local copy of one cwd's catalog, kept current as the context budget intends: `skills.changed` says the
 * catalog moved on, and `skills.list {sinceGeneration}` sends only what changed (the full list
 * when the daemon no longer holds the changes since). What an editor extension keeps.
 */

import type { SkillsdClient } from "./client.js";
import type {
  Diagnostic,
  ListResult,
  SkillLoadError,
  SkillMetadata,
  SkillsChangedParams,
} from "./protocol.js";

export class CatalogMirror {
  /** The skills by id, as of `generation`. */
  readonly skills = new Map<string, SkillMetadata>();
  errors: SkillLoadError[] = [];
  diagnostics: Diagnostic[] = [];
  generation = 0;
  /** How many updates came as a delta, and how many as a full list. */
  deltas = 0;
  fullLists = 0;
  private queue: Promise<void> = Promise.resolve();
  private readonly listener = (params: SkillsChangedParams) => {
    if (params.generation > this.generation) void this.refresh().catch(() => undefined);
  };

  constructor(
    readonly client: SkillsdClient,
    readonly cwd: string,
    readonly onChange?: (mirror: CatalogMirror) => void,
  ) {}

  /** List the catalog, then follow its `skills.changed`. */
  async start(): Promise<this> {
    this.client.on("skills.changed", this.listener);
    await this.refresh();
    return this;
  }

  stop(): void {
    this.client.off("skills.changed", this.listener);
  }

  /** Catch up with the daemon: a delta from `generation`, or the full list. One at a time. */
  refresh(): Promise<void> {
    this.queue = this.queue.then(async () => {
      const since = this.generation || undefined;
      const listed = await this.client.listSkills({ cwd: this.cwd, sinceGeneration: since });
      this.apply(listed);
      this.onChange?.(this);
    });
    return this.queue;
  }

  private apply(listed: ListResult): void {
    if (listed.delta == null) {
      this.fullLists += 1;
      this.skills.clear();
      for (const skill of listed.skills) this.skills.set(skill.id, skill);
    } else {
      this.deltas += 1;
      for (const id of listed.delta.removed) this.skills.delete(id);
      for (const skill of [...listed.delta.added, ...listed.delta.changed]) this.skills.set(skill.id, skill);
    }
    this.errors = listed.errors;
    this.diagnostics = listed.diagnostics;
    this.generation = listed.generation;
  }
}
