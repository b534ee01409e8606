// Module resolution hooks (see register.mjs): the suite's "fs" is fs.mjs.
const fsWithGlob = new URL("./fs.mjs", import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  const fromSuite = context.parentURL?.includes("/@modelcontextprotocol/conformance/");
  if (fromSuite && (specifier === "fs" || specifier === "node:fs")) {
    return { url: fsWithGlob, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
