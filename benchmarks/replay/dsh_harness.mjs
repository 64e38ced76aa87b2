// Drives the real DSH str_replace_editor (npm @deepseek-ai/dsh-tool-str-replace-editor) for the
// edit-replay benchmark and for the differential tests (tests/support/dsh): one node start-up runs
// a whole batch of cases, each with a fresh editor. No observation plugin is mounted: every edit
// reads and writes in one go, as vfs's editor does in one-shot mode (session=False).
//
// Usage: node dsh_harness.mjs <node_modules directory holding @deepseek-ai/...>
// stdin:  JSON list of cases {id, calls: [arguments, ...], repeat?, max_output_chars?} with either
//         root: a real directory, served by the DSH local filesystem (@deepseek-ai/dsh-fs-local,
//               node's fs; the differential tests), or
//         files: {path: base64}, served by a small in-memory ctx.fs (the benchmark; no directories
//               of its own, so listings are empty).
// stdout: JSON list of {id, results: [{text, error, code}], files?: {path: base64} (memory only)}.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
const load = (name, file = "lib/index.js") => import(pathToFileURL(join(modules, name, file)).href);
const editor = await load("@deepseek-ai/dsh-tool-str-replace-editor");

// Loaded on first use: the benchmark's install has no dsh-fs-local.
let localFs;
async function localFileSystem(root) {
  if (localFs === undefined) {
    const { Context } = await load("@deepseek-ai/cordis");
    const { LocalFileSystem } = await load("@deepseek-ai/dsh-fs-local");
    localFs = (cwd) => new LocalFileSystem(new Context(), { cwd, diffBasisMaxBytes: 10 * 1024 * 1024 });
  }
  return localFs(root);
}

function memoryFileSystem(files) {
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

// The editor as a DSH plugin sees its host: a filesystem and a registry to register itself in.
function makeTool(fs, maxOutputChars) {
  let tool;
  const ctx = {
    fs,
    tools: { register(t) { tool = t; } },
    emit() {},
    async waterfall(_name, _target, _exec, fallback) { return fallback(); },
    get() { return undefined; },
  };
  editor.apply(ctx, maxOutputChars === undefined ? {} : { maxOutputChars });
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

async function run(one) {
  const files = one.files === undefined
    ? undefined
    : new Map(Object.entries(one.files).map(([k, v]) => [k, Buffer.from(v, "base64")]));
  const fs = files === undefined ? await localFileSystem(one.root) : memoryFileSystem(files);
  const tool = makeTool(fs, one.max_output_chars ?? undefined);
  const results = [];
  for (let round = 0; round < (one.repeat ?? 1); round++) {
    for (const args of one.calls) results.push(await call(tool, args));
  }
  if (files === undefined) return { id: one.id, results };
  return { id: one.id, results, files: Object.fromEntries([...files].map(([k, v]) => [k, v.toString("base64")])) };
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const out = [];
for (const one of JSON.parse(Buffer.concat(chunks).toString("utf8"))) out.push(await run(one));
process.stdout.write(JSON.stringify(out));
