// Drives `hunk mcp` with the official TypeScript MCP SDK client: lists the
// tools, checks their annotations, calls each and checks results and
// errors. Usage: node client.mjs HUNK_BINARY WORKSPACE. Prints "ok: ..." and
// exits 0, or prints what failed and exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [hunk, dir] = process.argv.slice(2);
const failures = [];
const check = (cond, what) => { if (!cond) failures.push(what); };

async function session(args) {
  const client = new Client({ name: "ts-e2e", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: hunk, args: ["mcp", "-C", dir, ...args], env: { ...process.env, HUNK_CONFIG: "/dev/null" } }));
  return client;
}
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

const c = await session([]);
const { tools } = await c.listTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
check(["apply_patch", "read", "write", "edit", "exec"].every((n) => byName[n]), `tools: ${Object.keys(byName)}`);
check(byName.read.annotations.readOnlyHint === true && byName.read.annotations.openWorldHint === false, "read annotations");
check(byName.write.annotations.destructiveHint === true && byName.write.annotations.readOnlyHint === false, "write annotations");
check(byName.exec.annotations.openWorldHint === false, "exec is not open-world without --network");
check(byName.edit.outputSchema && byName.edit.inputSchema.properties.oldText, "edit schemas");

let r = await c.callTool({ name: "read", arguments: { path: "a.txt" } });
check(!r.isError && text(r).includes("beta") && r.structuredContent.totalLines === 2, `read: ${JSON.stringify(r)}`);
// A client that forwards structuredContent to the model forwards the file's lines.
check(r.structuredContent.content.includes("alpha") && r.structuredContent.content.includes("beta"), `read structuredContent.content: ${JSON.stringify(r)}`);
r = await c.callTool({ name: "edit", arguments: { path: "a.txt", oldText: "beta", newText: "gamma" } });
check(!r.isError && readFileSync(join(dir, "a.txt"), "utf8") === "alpha\ngamma\n", `edit: ${JSON.stringify(r)}`);
r = await c.callTool({ name: "edit", arguments: { path: "a.txt", oldText: "delta", newText: "x" } });
check(r.isError === true && r.structuredContent.code === "NO_MATCH" && r.structuredContent.content.includes("hint:"), `edit no match: ${JSON.stringify(r)}`);
r = await c.callTool({ name: "write", arguments: { path: "b.txt", content: "bee\n", createOnly: true } });
check(!r.isError && r.structuredContent.created === true, `write: ${JSON.stringify(r)}`);
r = await c.callTool({ name: "write", arguments: { path: "b.txt", content: "wasp\n", createOnly: true } });
check(r.isError && r.structuredContent.code === "ALREADY_EXISTS", `write create-only: ${JSON.stringify(r)}`);
r = await c.callTool({ name: "apply_patch", arguments: { patch: "*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n" } });
check(!r.isError && text(r).includes("A c.txt"), `apply_patch: ${JSON.stringify(r)}`);
r = await c.callTool({ name: "read", arguments: { path: "/etc/passwd" } });
check(r.isError && r.structuredContent.code === "OUTSIDE_WORKSPACE", `read outside: ${JSON.stringify(r)}`);
r = await c.callTool({ name: "exec", arguments: { command: "cat c.txt; exit 4" } });
check(r.structuredContent.exitCode === 4 && r.structuredContent.content === "Exit code: 4\nsea\nExit code: 4" && r.structuredContent.stdout === undefined, `exec: ${JSON.stringify(r)}`);
await c.close();

const f = await session(["--tools", "filesystem"]);
const fs = (await f.listTools()).tools.map((t) => t.name).sort();
check(fs.length === 14 && fs.includes("read_text_file") && fs.includes("directory_tree"), `filesystem tools: ${fs}`);
r = await f.callTool({ name: "read_text_file", arguments: { path: "a.txt", head: 1 } });
check(!r.isError && text(r) === "alpha" && r.structuredContent.content === "alpha", `read_text_file: ${JSON.stringify(r)}`);
r = await f.callTool({ name: "edit_file", arguments: { path: "a.txt", edits: [{ oldText: "alpha", newText: "omega" }], dryRun: true } });
check(!r.isError && text(r).includes("+omega") && readFileSync(join(dir, "a.txt"), "utf8").startsWith("alpha"), `edit_file dryRun: ${JSON.stringify(r)}`);
r = await f.callTool({ name: "list_allowed_directories", arguments: {} });
check(!r.isError && text(r).includes(dir), `list_allowed_directories: ${JSON.stringify(r)}`);
await f.close();

if (failures.length) {
  console.log("FAILED:\n" + failures.join("\n"));
  process.exit(1);
}
console.log(`ok: ${tools.length} hunk tools and ${fs.length} filesystem tools listed and called through @modelcontextprotocol/sdk`);
