// A small typed client for the ccproxy webview protocol, compiled by the
// test suite against protocol.ts to show the types are usable. It connects
// with the token subprotocol, matches replies to requests by id, keeps the
// last seq of each session so a reconnect resumes without loss, answers
// permission prompts, and renders tool results as text.

import {
  PROTOCOL_VERSION,
  SUBPROTOCOL,
  TOKEN_SUBPROTOCOL_PREFIX,
  blobURL,
  isEvent,
  isSystemInit,
  toolResults,
  type NormalizedEvent,
  type ProtocolError,
  type PushType,
  type Pushes,
  type RequestData,
  type RequestFrame,
  type RequestType,
  type ResultData,
  type ServerFrame,
} from "./protocol";

/** A request that got an error reply. */
export class ProtocolFailure extends Error {
  constructor(readonly error: ProtocolError) {
    super(`${error.code}: ${error.message}`);
  }
}

type Handlers = { [K in PushType]?: ((data: Pushes[K]) => void)[] };

export class CcproxyClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (data: unknown) => void; reject: (err: Error) => void }>();
  private readonly handlers: Handlers = {};
  /** The last seq seen per session: what to resubscribe with after a reconnect. */
  readonly lastSeq = new Map<string, number>();

  constructor(private readonly ws: WebSocket) {
    ws.addEventListener("message", (ev: MessageEvent<string>) => this.receive(ev.data));
  }

  /** Connects from a browser or webview, where headers cannot be set. */
  static connect(url: string, token: string): CcproxyClient {
    return new CcproxyClient(new WebSocket(url, [SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + token]));
  }

  /** Sends a request and resolves with its typed reply data. */
  request<T extends RequestType>(type: T, data: RequestData<T>): Promise<ResultData<T>> {
    const id = this.nextId++;
    const frame = { type, id, data } as RequestFrame<T>;
    return new Promise<ResultData<T>>((resolve, reject) => {
      this.pending.set(id, { resolve: (d) => resolve(d as ResultData<T>), reject });
      this.ws.send(JSON.stringify(frame));
    });
  }

  /** Registers a handler for a push type. */
  on<T extends PushType>(type: T, handler: (data: Pushes[T]) => void): void {
    const list = (this.handlers[type] ??= []) as ((data: Pushes[T]) => void)[];
    list.push(handler);
  }

  /** Resubscribes every session after a reconnect, continuing after the last seq seen. */
  async resume(): Promise<void> {
    for (const [session, afterSeq] of this.lastSeq) {
      await this.request("session/subscribe", { session, afterSeq });
    }
  }

  private receive(text: string): void {
    const frame = JSON.parse(text) as ServerFrame;
    if (frame.type === "reply") {
      const waiter = typeof frame.id === "number" ? this.pending.get(frame.id) : undefined;
      if (waiter === undefined) return; // e.g. id null: a frame of ours was malformed
      this.pending.delete(frame.id as number);
      if (frame.ok) waiter.resolve(frame.data);
      else waiter.reject(new ProtocolFailure(frame.error));
      return;
    }
    if (frame.type === "session/event") {
      const { session, seq } = frame.data;
      if (seq <= (this.lastSeq.get(session) ?? 0)) return; // already seen (re-subscribe)
      this.lastSeq.set(session, seq);
    }
    this.dispatch(frame);
  }

  private dispatch<T extends PushType>(frame: { type: T; data: Pushes[T] }): void {
    const list = this.handlers[frame.type] as ((data: Pushes[T]) => void)[] | undefined;
    for (const handler of list ?? []) handler(frame.data);
  }
}

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
export async function demo(url: string, token: string, proxyBase: string): Promise<void> {
  const client = CcproxyClient.connect(url, token);
  client.on("hello", (hello) => {
    if (hello.protocol !== PROTOCOL_VERSION) throw new Error(`proxy speaks protocol ${hello.protocol}`);
  });
  client.on("session/event", ({ event }) => console.log(describe(event, proxyBase)));
  client.on("session/gap", ({ session, firstSeq }) => console.warn(`${session}: events before ${firstSeq} were lost`));
  client.on("permission/request", (req) => {
    const allow = req.mcp?.server === "everything";
    void client.request(
      "permission/respond",
      allow
        ? { session: req.session, requestId: req.requestId, behavior: "allow" }
        : { session: req.session, requestId: req.requestId, behavior: "deny", message: "Not this one" },
    );
  });
  client.on("mcp/status", ({ servers }) => {
    for (const s of servers) console.log(`${s.name}: ${s.status}${s.error ? " — " + s.error : ""}`);
  });

  const { session } = await client.request("session/create", { cwd: "/home/dev/work/proj9", permissionMode: "default" });
  const sub = await client.request("session/subscribe", { session, afterSeq: 0 });
  console.log(`subscribed to ${sub.session}, state ${sub.state}, log ${sub.firstSeq}..${sub.lastSeq}`);
  await client.request("mcp/subscribe", {});
  await client.request("session/send", { session, text: "Show me the tiny image from the everything server." });
  try {
    const result = await client.request("mcp/call", { name: "everything", tool: "get-sum", arguments: { a: 1, b: 2 } });
    console.log(result.isError ? "tool error" : result.content, `${result.durationMs} ms`);
  } catch (err) {
    if (err instanceof ProtocolFailure && err.error.code === "mcp_invalid_arguments") {
      for (const f of err.error.details?.fields ?? []) console.log(`${f.path}: ${f.message}`);
    }
  }
}
