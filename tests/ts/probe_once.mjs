// TypeScript SDK 2.x in auto version negotiation against `deskpilot mcp --sandbox` over stdio.
// The SDK probes server/discover on a throwaway sibling process first; deskpilot must answer it
// without starting a desktop. After a tool call the script prints one JSON line and waits for a
// line on stdin (the test counts the sandboxes meanwhile), then closes.
// Input: one JSON argument {command, args, env}.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createInterface } from "node:readline";

const input = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: input.command,
  args: input.args,
  env: input.env,
  stderr: "inherit",
});
const client = new Client(
  { name: "ts-sdk-2-auto", version: "2.0.0" },
  { versionNegotiation: { mode: "auto" } },
);
const out = {};
try {
  await client.connect(transport);
  out.protocolVersion = client.getNegotiatedProtocolVersion();
  out.tools = (await client.listTools()).tools.length;
  const listed = await client.callTool({ name: "list_windows", arguments: {} });
  out.isError = Boolean(listed.isError);
  out.windows = listed.structuredContent?.windows;
} catch (error) {
  out.error = String(error);
}
console.log(JSON.stringify(out));
const lines = createInterface({ input: process.stdin });
for await (const _ of lines) break;
lines.close();
process.stdin.destroy();
await client.close();
