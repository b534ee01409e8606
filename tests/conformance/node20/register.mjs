// Node 20 has no fs.globSync (Node 22 does), and the suite imports it by name from "fs". A
// builtin's named exports are fixed when it is first loaded, so adding the function to fs is
// too late: instead the suite's "fs" import is resolved to fs.mjs beside this file, which is
// node:fs plus the glob package's globSync. Loaded with `node --import`; a no-op from Node 22.
import fs from "node:fs";
import { register } from "node:module";

if (typeof fs.globSync !== "function") {
  register("./hooks.mjs", import.meta.url);
}
