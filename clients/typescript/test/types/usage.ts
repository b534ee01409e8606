// Compiled (never run) by test/types.test.mjs: the typed API accepts what the protocol allows
// and rejects what it does not. Each @ts-expect-error fails the build if the error goes away.

import {
  SkillsdClient,
  SkillsdError,
  type ListResult,
  type LoadResult,
  type SkillsChangedParams,
} from "../../src/index.js";

export async function usage(client: SkillsdClient): Promise<void> {
  const listed: ListResult = await client.request("skills.list", { cwd: "/repo", scope: "user" });
  const names: string[] = listed.skills.map((skill) => skill.name);
  const loaded: LoadResult = await client.load({ name: names[0] ?? "x", sessionId: "s" });
  const text: string = loaded.content;
  await client.request("ping");
  await client.request("skills.list");
  await client.search({ query: "pdf", limit: 3 }, { timeoutMs: 1000, signal: AbortSignal.timeout(5000) });
  const nothing: null = await client.request("shutdown");

  // @ts-expect-error skills.search needs its query
  await client.request("skills.search", {});
  // @ts-expect-error skills.search needs params at all
  await client.request("skills.search");
  // @ts-expect-error scope is "repo" | "user" | "extra"
  await client.listSkills({ scope: "global" });
  // @ts-expect-error not a protocol method (use client.call for those)
  await client.request("skills.nope", {});
  // @ts-expect-error the result of skills.list has no `content`
  listed.content;

  client.onNotification("skills.changed", (params) => {
    const note: SkillsChangedParams = params;
    const generation: number = note.generation;
    // @ts-expect-error notifications carry no `skills`
    note.skills;
    void generation;
  });
  client.on("skills.changed", (params) => void params.added.length);

  try {
    await client.load({ name: "x" });
  } catch (error) {
    if (error instanceof SkillsdError && error.is("skill_not_found")) {
      const suggestions: string[] | undefined = error.data.suggestions;
      void suggestions;
    }
    if (error instanceof SkillsdError && error.is("ambiguous_skill")) {
      // @ts-expect-error ambiguous_skill data has candidates, not suggestions
      error.data.suggestions;
    }
  }
  void text;
  void nothing;
}
