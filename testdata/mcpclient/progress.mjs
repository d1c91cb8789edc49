// A long exec through the official TypeScript SDK client: its request
// timeout (SECONDS, below the command's run time) is reset by hunk's
// progress notifications (resetTimeoutOnProgress), so the call completes.
// Usage: node progress.mjs HUNK_BINARY WORKSPACE TIMEOUT_SECONDS RUN_SECONDS.
// Prints "ok: ..." and exits 0, or prints what failed and exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [hunk, dir, timeout, run] = process.argv.slice(2);
const client = new Client({ name: "ts-progress", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: hunk, args: ["mcp", "-C", dir, "--timeout", "10m"], env: { ...process.env, HUNK_CONFIG: "/dev/null" } }));
const seen = [];
try {
  const r = await client.callTool(
    { name: "exec", arguments: { command: `echo started; sleep ${run}; echo finished` } },
    undefined,
    { timeout: Number(timeout) * 1000, resetTimeoutOnProgress: true, onprogress: (p) => seen.push(p) },
  );
  const text = r.content.map((c) => c.text).join("\n");
  if (r.isError || !text.includes("finished") || !text.includes("Exit code: 0")) {
    console.log(`FAILED: the result: ${JSON.stringify(r)}`);
    process.exit(1);
  }
  if (seen.length < 2 || !seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress) || !seen[seen.length - 1].message.includes("last output: started")) {
    console.log(`FAILED: progress: ${JSON.stringify(seen)}`);
    process.exit(1);
  }
  console.log(`ok: a ${run} s exec under a ${timeout} s request timeout, ${seen.length} progress notifications, the last: ${seen[seen.length - 1].message}`);
} catch (e) {
  console.log(`FAILED: ${e} (progress seen: ${JSON.stringify(seen)})`);
  process.exit(1);
}
await client.close();
