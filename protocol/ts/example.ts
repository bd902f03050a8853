// How an extension's webview uses @ccproxy/client, compiled by the test suite
// (TestTypeScriptCompiles) with the strict options of tsconfig.json and the
// DOM's WebSocket and fetch: it connects with the token subprotocol, sends
// typed requests, renders events (each seq once, resumed after reconnects),
// answers permission prompts, and renders tool results as text.

import { connect, ProtocolFailure, type WebSocketConstructor } from "./client.js";
import {
  PROTOCOL_VERSION,
  blobURL,
  isEvent,
  isSystemInit,
  toolResults,
  type NormalizedEvent,
} from "./protocol.js";

// The DOM's WebSocket and fetch are what the client takes by default.
const DomWebSocket: WebSocketConstructor = WebSocket;

/** One line of text for an event, as a chat view might show it. */
export function describe(event: NormalizedEvent, proxyBase: string): string {
  if (isSystemInit(event)) {
    const servers = (event.mcp_servers ?? []).map((s) => `${s.name}: ${s.status}`);
    return `session started (${event.model ?? "default model"}; MCP ${servers.join(", ") || "none"})`;
  }
  if (isEvent(event, "assistant")) {
    const content = event.message.content;
    if (typeof content === "string") return content;
    return content
      .map((block) => {
        if (block.type === "text") return String(block.text);
        if (block.type === "tool_use") {
          const mcp = block.mcp as { server: string; tool: string } | undefined;
          return mcp ? `[${mcp.server} · ${mcp.tool}]` : `[${block.name}]`;
        }
        return "";
      })
      .join("");
  }
  if (isEvent(event, "user")) {
    return toolResults(event)
      .map((r) => {
        const images = (r.attachments ?? []).map((a) => blobURL(proxyBase, a) ?? a.error ?? "");
        return (r.is_error ? "error: " : "") + r.content + (images.length ? " " + images.join(" ") : "");
      })
      .join("\n");
  }
  if (isEvent(event, "result")) {
    return `${event.is_error ? "failed" : "done"} in ${event.duration_ms ?? 0} ms, $${event.total_cost_usd ?? 0}`;
  }
  if (isEvent(event, "ccproxy")) {
    return event.subtype === "noise" ? `(noise) ${event.text}` : `(a line of ${event.bytes} bytes was dropped)`;
  }
  return "";
}

/** Typical use in an extension's webview. */
export async function demo(url: string, token: string): Promise<void> {
  const client = await connect(url, token, { WebSocket: DomWebSocket, fetch, backoff: { maxMs: 10_000 } });
  if (client.hello?.protocol !== PROTOCOL_VERSION) throw new Error("unreachable: connect checks the protocol");
  const proxyBase = client.baseURL;

  const { session } = await client.request("session/create", { cwd: "/home/dev/work/proj9", permissionMode: "default" });
  client.onEvent(session, ({ event }) => console.log(describe(event, proxyBase)));
  client.onGap(({ session, firstSeq }) => console.warn(`${session}: events before ${firstSeq} were lost`));
  client.onPermission((req) =>
    req.mcp?.server === "everything" ? { behavior: "allow" } : { behavior: "deny", message: "Not this one" },
  );
  client.on("mcp/status", ({ servers }) => {
    for (const s of servers) console.log(`${s.name}: ${s.status}${s.error ? " — " + s.error : ""}`);
  });

  const sub = await client.subscribe(session);
  console.log(`subscribed to ${sub.session}, state ${sub.state}, log ${sub.firstSeq}..${sub.lastSeq}`);
  await client.request("mcp/subscribe", {});
  await client.request("session/send", { session, text: "Show me the tiny image from the everything server." });
  try {
    const result = await client.request(
      "mcp/call",
      { name: "everything", tool: "get-sum", arguments: { a: 1, b: 2 } },
      { signal: AbortSignal.timeout(30_000) },
    );
    console.log(result.isError ? "tool error" : result.content, `${result.durationMs} ms`);
    for (const a of result.attachments ?? []) console.log(URL.createObjectURL(await client.blob(a)));
  } catch (err) {
    if (err instanceof ProtocolFailure && err.error.code === "mcp_invalid_arguments") {
      for (const f of err.error.details?.fields ?? []) console.log(`${f.path}: ${f.message}`);
    }
  }
  client.close();
}
