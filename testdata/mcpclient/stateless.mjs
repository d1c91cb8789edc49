// Drives `hunk mcp` with @modelcontextprotocol/client 2.x pinned to protocol
// 2026-07-28 (server/discover, every request with its _meta, no
// initialize): lists the tools and calls every one. Usage: node
// stateless.mjs HUNK_BINARY WORKSPACE. Prints "ok: ..." and exits 0, or
// prints what failed and exits 1.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { readFileSync } from "node:fs";

const [hunk, dir] = process.argv.slice(2);
const failures = [];
const check = (cond, what) => { if (!cond) failures.push(what); };
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

const client = new Client({ name: "ts2-stateless", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
await client.connect(new StdioClientTransport({ command: hunk, args: ["mcp", "-C", dir, "--driver", "none"], env: { ...process.env, HUNK_CONFIG: "/dev/null" } }));
const version = client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion?.();
check(version === undefined || version === "2026-07-28", `negotiated ${version}`);
const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort().join(",");
check(names === "apply_patch,edit,exec,read,search,undo,write", `tools: ${names}`);
const calls = [
  ["read", { path: "a.txt" }, "alpha"],
  ["search", { pattern: "alph" }, "a.txt:1:alpha"],
  ["write", { path: "b.txt", content: "one\n" }, "b.txt"],
  ["edit", { path: "a.txt", oldText: "beta", newText: "BETA" }, "a.txt"],
  ["apply_patch", { patch: "*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n" }, "c.txt"],
  ["undo", {}, "c.txt"],
  ["exec", { command: "cat a.txt" }, "Exit code: 0\nalpha\nBETA\nExit code: 0"],
];
for (const [name, args, want] of calls) {
  const r = await client.callTool({ name, arguments: args });
  check(!r.isError && text(r).includes(want), `${name}: ${JSON.stringify(r)}`);
}
await client.close();
if (failures.length) {
  console.log("FAILED:\n" + failures.join("\n"));
  process.exit(1);
}
const pkg = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url)));
console.log(`ok: @modelcontextprotocol/client ${pkg.version} pinned to 2026-07-28 (${version ?? "pinned"}) listed ${tools.length} tools and called each`);
