/** The skillsd TypeScript client: `SkillsdClient` and the protocol's generated types. */

export * from "./client.js";
export * from "./mirror.js";
export * from "./protocol.js";
