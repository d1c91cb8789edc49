// The tool loops of docs/agents.md, run for real: each provider's official
// SDK client asks the model (a scripted stand-in on 127.0.0.1 in the tests)
// with the tools `hunk tools` declares, passes every tool call it gets to
// `hunk call` and sends the results back, until the model stops calling.
//
//   node loops.mjs HUNK BASE_URL responses|chat|anthropic [hunk call flags...]
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { execFileSync, spawnSync } from "node:child_process";

const [hunk, base, api, ...flags] = process.argv.slice(2);
const task = "Work through the task in notes.txt.";

// hunkCall answers one tool call (or a list of them) in the provider's shape.
function hunkCall(call) {
  const r = spawnSync(hunk, ["call", ...flags], { input: JSON.stringify(call) });
  if (r.status !== 0 && r.status !== 1) throw new Error(`hunk call: ${r.stderr}`);
  return JSON.parse(r.stdout.toString()); // exit 1: the call failed, and the result says why
}
const declarations = (provider) => JSON.parse(execFileSync(hunk, ["tools", "--for", provider]).toString());

if (api === "responses") {
  const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "test" });
  const tools = declarations("openai");
  const input = [{ role: "user", content: task }];
  for (let turn = 0; turn < 20; turn++) {
    const response = await openai.responses.create({ model: "gpt-5", tools, input });
    const calls = response.output.filter((item) => item.type.endsWith("_call"));
    if (calls.length === 0) break;
    input.push(...response.output, ...hunkCall(calls)); // an array of calls: an array of outputs
  }
} else if (api === "chat") {
  const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "test" });
  const tools = declarations("openai-chat");
  const messages = [{ role: "user", content: task }];
  for (let turn = 0; turn < 20; turn++) {
    const completion = await openai.chat.completions.create({ model: "gpt-5", tools, messages });
    const message = completion.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) break;
    messages.push(...hunkCall(message.tool_calls)); // {role: "tool", tool_call_id, content} each
  }
} else if (api === "anthropic") {
  const anthropic = new Anthropic({ baseURL: base, apiKey: "test" });
  const tools = declarations("anthropic");
  const messages = [{ role: "user", content: task }];
  for (let turn = 0; turn < 20; turn++) {
    const message = await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 4096, tools, messages });
    messages.push({ role: "assistant", content: message.content });
    const uses = message.content.filter((block) => block.type === "tool_use");
    if (uses.length === 0) break;
    messages.push({ role: "user", content: hunkCall(uses) }); // tool_result blocks
  }
} else {
  throw new Error(`unknown api ${api}`);
}
console.log("ok");
