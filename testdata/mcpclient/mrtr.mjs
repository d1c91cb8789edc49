// Drives `hunk mcp` with @modelcontextprotocol/client 2.x pinned to protocol
// 2026-07-28, declaring elicitation: a call a rule asks about comes back
// input_required with a form; the SDK's multi round-trip driver hands it to
// the elicitation handler (the person) and sends the call again with the
// answer and the requestState. Usage: node mrtr.mjs HUNK_BINARY WORKSPACE.
// Prints "ok: ..." and exits 0, or what failed and exits 1.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [hunk, dir] = process.argv.slice(2);
const failures = [];
const check = (cond, what) => { if (!cond) failures.push(what); };
const text = (r) => (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const answers = [];
const shown = [];
const client = new Client({ name: "ts2-mrtr", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
client.setRequestHandler("elicitation/create", async (request) => {
  shown.push(request.params.message);
  return answers.shift() ?? { action: "decline" };
});
await client.connect(new StdioClientTransport({ command: hunk,
  args: ["mcp", "-C", dir, "--ask-cmd", "touch", "--ask-write", "/deploy/"], env: { ...process.env, HUNK_CONFIG: "/dev/null" } }));

const accept = (decision) => ({ action: "accept", content: { decision } });
const cases = [
  ["exec", { argv: ["touch", "once"] }, "once", accept("allow once"), true, ""],
  ["exec", { argv: ["touch", "denied"] }, "denied", accept("deny"), false, "DECLINED"],
  ["exec", { argv: ["touch", "declined"] }, "declined", { action: "decline" }, false, "DECLINED"],
  ["exec", { argv: ["touch", "cancelled"] }, "cancelled", { action: "cancel" }, false, "DECLINED"],
  ["write", { path: "deploy/w.yaml", content: "replicas: 3\n" }, "deploy/w.yaml", accept("allow once"), true, ""],
  ["write", { path: "deploy/no.yaml", content: "replicas: 9\n" }, "deploy/no.yaml", accept("deny"), false, "DECLINED"],
];
for (const [tool, args, made, answer, want, code] of cases) {
  const before = shown.length;
  answers.push(answer);
  const r = await client.callTool({ name: tool, arguments: args });
  const got = existsSync(join(dir, made));
  check(got === want, `${tool} ${made}: made ${got}, want ${want}: ${JSON.stringify(r)}`);
  check(code === "" ? !r.isError : r.isError && text(r).includes(`[${code}]`), `${tool} ${made}: result ${JSON.stringify(r)}, want ${code || "success"}`);
  check(shown.length === before + 1, `${tool} ${made}: the person was asked ${shown.length - before} times, want once`);
}
check(shown[0]?.includes("command:  touch once") && shown[0]?.includes('command rule ask "touch" (--ask-cmd)'), `the command's form showed ${JSON.stringify(shown[0])}`);
check(shown[4]?.includes("+++ b/deploy/w.yaml") && shown[4]?.includes("    +replicas: 3"), `the change's form showed ${JSON.stringify(shown[4])}`);

// A call no rule asks about runs without a form.
const before = shown.length;
const r = await client.callTool({ name: "read", arguments: { path: "deploy/w.yaml" } });
check(!r.isError && text(r).includes("replicas: 3") && shown.length === before, `read: ${JSON.stringify(r)}`);
await client.close();
if (failures.length) {
  console.log("FAILED:\n" + failures.join("\n"));
  process.exit(1);
}
const pkg = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url)));
console.log(`ok: @modelcontextprotocol/client ${pkg.version} at 2026-07-28: ${cases.length} asks through input_required, each answered as the person said`);
