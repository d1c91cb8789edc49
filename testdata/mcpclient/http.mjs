// Drives `hunk serve` over Streamable HTTP with @modelcontextprotocol/client
// 2.x: once in a session (its legacy mode: initialize, Mcp-Session-Id)
// and once stateless (pinned to 2026-07-28), each running an agent's read,
// edit, two-file apply_patch, exec and undo, checked on disk. Usage: node
// http.mjs ENDPOINT WORKSPACE [HEADER=VALUE ...] (headers sent with every
// request: a token, the router's X-Sandbox-*). Prints "ok: ..." and exits
// 0, or prints what failed and exits 1.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [endpoint, dir, ...pairs] = process.argv.slice(2);
const headers = Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
const failures = [];
const check = (cond, what) => { if (!cond) failures.push(what); };
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const read = (name) => readFileSync(join(dir, name), "utf8");

for (const pin of ["legacy", "2026-07-28"]) {
  writeFileSync(join(dir, "a.txt"), "alpha\nbeta\n");
  writeFileSync(join(dir, "b.txt"), "one\ntwo\n");
  const client = new Client({ name: `ts2-http-${pin}`, version: "1.0.0" }, { versionNegotiation: { mode: pin === "legacy" ? "legacy" : { pin } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers } }));
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort().join(",");
  check(names === "apply_patch,edit,exec,read,search,undo,write", `${pin} tools: ${names}`);
  const calls = [
    ["read", { path: "a.txt" }, "alpha"],
    ["edit", { path: "a.txt", oldText: "beta", newText: "BETA" }, "a.txt"],
    ["apply_patch", { patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-BETA\n+gamma\n*** Update File: b.txt\n@@\n-two\n+TWO\n*** End Patch\n" }, "b.txt"],
    ["exec", { command: "cat a.txt b.txt" }, "alpha\ngamma\none\nTWO\n"],
    ["undo", {}, "b.txt"],
  ];
  for (const [name, args, want] of calls) {
    const r = await client.callTool({ name, arguments: args });
    check(!r.isError && text(r).includes(want), `${pin} ${name}: ${JSON.stringify(r)}`);
  }
  check(read("a.txt") === "alpha\nBETA\n" && read("b.txt") === "one\ntwo\n", `${pin}: after undo a.txt ${JSON.stringify(read("a.txt"))}, b.txt ${JSON.stringify(read("b.txt"))}`);
  await client.close();
}
if (failures.length) {
  console.log("FAILED:\n" + failures.join("\n"));
  process.exit(1);
}
const pkg = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url)));
console.log(`ok: @modelcontextprotocol/client ${pkg.version} over Streamable HTTP, in a legacy session and stateless 2026-07-28: read, edit, a two-file apply_patch, exec and undo`);
