// Drives the real DSH str_replace_editor (npm @deepseek-ai/dsh-tool-str-replace-editor) over the real
// DSH local filesystem (@deepseek-ai/dsh-fs-local, node's fs on a real directory), for the
// differential tests. No observation plugin is mounted: every edit reads and writes in one go, as
// vfs's editor does in one-shot mode (session=False).
//
// Usage: node harness.mjs <node_modules directory holding @deepseek-ai/...>
// stdin:  JSON list of {id, root, max_output_chars, calls: [arguments, ...]}
// stdout: JSON list of {id, results: [{text, error, code}]}; one node start-up for every case.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
const load = (name, file) => import(pathToFileURL(join(modules, name, file)).href);
const { Context } = await load("@deepseek-ai/cordis", "lib/index.js");
const { LocalFileSystem } = await load("@deepseek-ai/dsh-fs-local", "lib/index.js");
const editor = await load("@deepseek-ai/dsh-tool-str-replace-editor", "lib/index.js");

function makeTool(root, maxOutputChars) {
  const fs = new LocalFileSystem(new Context(), { cwd: root, diffBasisMaxBytes: 10 * 1024 * 1024 });
  let tool;
  const ctx = {
    fs,
    tools: { register(t) { tool = t; } },
    emit() {},
    async waterfall(_name, _target, _exec, fallback) { return fallback(); },
    get() { return undefined; },
  };
  editor.apply(ctx, { maxOutputChars });
  return tool;
}

// As the DSH ToolRuntime renders a result for the model: the value, or `Error: <message>`.
async function call(tool, args) {
  try {
    const text = await tool.execute(args, { signal: undefined });
    return { text, error: false, code: null };
  } catch (error) {
    return { text: `Error: ${error?.message ?? String(error)}`, error: true, code: error?.code ?? null };
  }
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const out = [];
for (const one of cases) {
  const tool = makeTool(one.root, one.max_output_chars);
  const results = [];
  for (const args of one.calls) results.push(await call(tool, args));
  out.push({ id: one.id, results });
}
process.stdout.write(JSON.stringify(out));
