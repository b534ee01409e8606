// node:fs with the glob package's globSync, which takes the same (pattern, { cwd }) call.
export * from "node:fs";
export { default } from "node:fs";
export { globSync } from "glob";
