// TypeScript SDK 1.x (what Claude Desktop, VS Code and mcp-remote are built on) against
// `deskpilot mcp` over stdio: a consequential click whose approval the user answers only after
// HOLD_MS, with the client's request timeout at TIMEOUT_MS and reset on progress.
// Input: one JSON argument {command, env, windowID, holdMs, timeoutMs}. Output: one JSON line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const input = JSON.parse(process.argv[2]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const transport = new StdioClientTransport({
  command: input.command,
  args: ["mcp"],
  env: input.env,
  stderr: "inherit",
});
const client = new Client(
  { name: "ts-sdk-1-progress", version: "1.0.0" },
  { capabilities: { elicitation: {} } },
);
const questions = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  questions.push(request.params.message);
  await sleep(input.holdMs);
  return { action: "accept", content: { approve: true } };
});

const out = { questions, progress: [] };
try {
  await client.connect(transport);
  const read = await client.callTool({ name: "read_screen_ax", arguments: { windowID: input.windowID } });
  const send = read.structuredContent.nodes.find((n) => n.name === "Send" && n.id);
  out.elementID = send.id;
  const started = Date.now();
  const result = await client.callTool(
    { name: "perform", arguments: { elementID: send.id } },
    undefined,
    {
      timeout: input.timeoutMs,
      resetTimeoutOnProgress: true,
      onprogress: (p) => out.progress.push({ at: Date.now() - started, ...p }),
    },
  );
  out.elapsedMs = Date.now() - started;
  out.isError = Boolean(result.isError);
  out.text = result.content[0].text;
} catch (error) {
  out.error = String(error);
} finally {
  await client.close();
}
console.log(JSON.stringify(out));
