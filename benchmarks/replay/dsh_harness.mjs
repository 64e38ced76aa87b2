// Drives the DSH str_replace_editor (npm @deepseek-ai/dsh-tool-str-replace-editor) over an in-memory
// ctx.fs, for the edit-replay benchmark. stdin: JSON list of {id, files: {path: base64}, calls, repeat};
// stdout: JSON list of {id, results: [{text, error, code}], files: {path: base64}}.
// Usage: node dsh_harness.mjs <node_modules directory holding @deepseek-ai/...>
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const modules = process.argv[2];
const entry = join(modules, "@deepseek-ai/dsh-tool-str-replace-editor/lib/index.js");
const editor = await import(pathToFileURL(entry).href);
void createRequire;

function makeFs(files) {
  let counter = 0;
  const versions = new Map();
  for (const key of files.keys()) versions.set(key, `v${++counter}`);
  const isDir = (p) => [...files.keys()].some((k) => k.startsWith(p.endsWith("/") ? p : p + "/"));
  return {
    sandboxMode: undefined,
    async resolve(path) { return { displayPath: path, path }; },
    async stat(target) {
      if (files.has(target.path)) return { type: "file", version: versions.get(target.path), size: files.get(target.path).length };
      if (isDir(target.path)) return { type: "directory", version: "d" };
      return undefined;
    },
    async readText(target) {
      // TextDecoder("utf-8") as a Node filesystem would decode: it drops a leading BOM.
      return new TextDecoder("utf-8", { fatal: true }).decode(files.get(target.path));
    },
    async writeText(target, content, intent) {
      const current = versions.get(target.path);
      if (intent?.kind === "replaceIfVersion" && intent.version !== current) {
        const err = new Error(`cannot write "${target.path}": file changed since it was read`);
        err.code = "FS_STALE_VERSION";
        throw err;
      }
      files.set(target.path, Buffer.from(content, "utf8"));
      versions.set(target.path, `v${++counter}`);
      return { version: versions.get(target.path) };
    },
    async listDir() { return []; },
  };
}

function makeCtx(fs) {
  let tool;
  const ctx = {
    fs,
    tools: { register(t) { tool = t; } },
    emit() {},
    async waterfall(_name, _target, _exec, fallback) { return fallback(); },
    get() { return undefined; },
  };
  editor.apply(ctx, {});
  return { ctx, tool: () => tool };
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const attempts = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const out = [];
for (const attempt of attempts) {
  const files = new Map(Object.entries(attempt.files).map(([k, v]) => [k, Buffer.from(v, "base64")]));
  const { tool } = makeCtx(makeFs(files));
  const results = [];
  for (let round = 0; round < attempt.repeat; round++) {
    for (const call of attempt.calls) {
      try {
        const text = await tool().execute(call, { signal: undefined });
        results.push({ text, error: false, code: null });
      } catch (error) {
        results.push({ text: `Error: ${error?.message ?? String(error)}`, error: true, code: error?.code ?? null });
      }
    }
  }
  out.push({ id: attempt.id, results, files: Object.fromEntries([...files].map(([k, v]) => [k, v.toString("base64")])) });
}
process.stdout.write(JSON.stringify(out));
