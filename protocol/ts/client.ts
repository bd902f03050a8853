// A small client for the ccproxy webview protocol (SPEC.md): one websocket,
// typed requests with promise replies, per-session event handlers that see
// each seq exactly once across reconnects, gaps, permission prompts answered
// by an async callback, and attachments fetched as Blobs.
//
// Data flow: connect() opens a websocket offering the subprotocols
// ccproxy.v1 and ccproxy.token.<token> and waits for hello. Frames from the
// proxy go to receive(): replies settle the promise of their request (by id);
// session/event frames pass the per-session seq filter (seq > last seq seen)
// before reaching handlers; permission/request frames go to the permission
// callback, whose decision is sent as permission/respond. When the socket
// drops, pending requests reject with ConnectionClosedError (the proxy may or
// may not have run them), and the client reconnects with backoff, resubscribes
// every session with afterSeq = the last seq it delivered, and then sends the
// requests made while it was away. Nothing here runs in the background but a
// backoff timer, which close() cancels.

import {
  PROTOCOL_VERSION,
  SUBPROTOCOL,
  TOKEN_SUBPROTOCOL_PREFIX,
  type Attachment,
  type HelloData,
  type PermissionRequestData,
  type PermissionResolvedData,
  type PermissionRespondData,
  type ProtocolError,
  type PushType,
  type Pushes,
  type RequestData,
  type RequestType,
  type ResultData,
  type SessionEventData,
  type SessionGapData,
  type SessionStateData,
  type SessionSubscribeResult,
} from "./protocol.js";

// ------------------------------------------------------------------ the websocket we need

/** The part of a WHATWG WebSocket the client uses: the browser's, Node 22's
 * global one, or the `ws` package's. */
export interface WebSocketLike {
  readonly readyState: number;
  readonly protocol: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open", listener: () => void): void;
  addEventListener(type: "message", listener: (ev: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: (ev: unknown) => void): void;
}

/** A WebSocket constructor, e.g. globalThis.WebSocket or `ws`'s WebSocket. */
export type WebSocketConstructor = new (url: string, protocols: string[]) => WebSocketLike;

type FetchLike = (
  input: string,
  init: { headers: Record<string, string>; signal?: AbortSignal },
) => Promise<{ ok: boolean; status: number; statusText: string; blob(): Promise<Blob>; text(): Promise<string> }>;

/** How long to wait before reconnect attempt `attempt` (1, 2, …). */
export interface Backoff {
  /** first wait, ms (default 250) */
  initialMs?: number;
  /** longest wait, ms (default 5000) */
  maxMs?: number;
  /** growth per attempt (default 2) */
  factor?: number;
  /** a fraction of each wait added or removed at random (default 0.2; 0 for none) */
  jitter?: number;
  /** Replaces the computed wait: resolve when the client may try again.
   * The signal aborts when the client is closed. */
  wait?: (attempt: number, signal: AbortSignal) => Promise<void>;
}

/** Connection states reported to ConnectOptions.onStatus. */
export type ConnectionStatus = "open" | "reconnecting" | "closed";

export interface ConnectOptions {
  /** default globalThis.WebSocket (browsers, Node ≥ 22); on Node 20 pass `ws`'s WebSocket */
  WebSocket?: WebSocketConstructor;
  /** default globalThis.fetch; used by blob() */
  fetch?: FetchLike;
  backoff?: Backoff;
  /** requests made while reconnecting that are held until the connection is back (default 1000); beyond, they reject */
  maxQueuedRequests?: number;
  /** bytes (JSON) of those requests together (default 64 MiB); beyond, they reject */
  maxQueuedBytes?: number;
  /** Called on every status change; `detail` says why for reconnecting and closed. */
  onStatus?: (status: ConnectionStatus, detail?: string) => void;
  /** Errors no promise can carry: a handler that threw, a resubscription or a permission answer that failed.
   * Default: console.error. */
  onError?: (err: Error) => void;
}

// ------------------------------------------------------------------ errors

/** A request got an error reply: `error` is the proxy's {code, message, details?}. */
export class ProtocolFailure extends Error {
  override readonly name = "ProtocolFailure";
  readonly code: string;
  constructor(
    readonly error: ProtocolError,
    readonly method?: string,
  ) {
    super(method ? `${method}: ${error.code}: ${error.message}` : `${error.code}: ${error.message}`);
    this.code = error.code;
  }
}

/** The connection dropped (or the client was closed) before the reply came: the
 * proxy may or may not have run the request. */
export class ConnectionClosedError extends Error {
  override readonly name = "ConnectionClosedError";
}

// ------------------------------------------------------------------ decisions

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** What a permission callback returns: permission/respond without session and requestId. */
export type PermissionDecision = DistributiveOmit<PermissionRespondData, "session" | "requestId">;
/** The permission callback. `signal` aborts when the request is resolved
 * elsewhere (another client, a timeout, claude withdrew it) or the client closes. */
export type PermissionHandler = (req: PermissionRequestData, signal: AbortSignal) => Promise<PermissionDecision> | PermissionDecision;

type Handler<T> = (data: T) => void;

/** A request from request() to its reply: waiting for the connection in the
 * queue, then pending under its id. */
interface Request {
  method: string;
  params: unknown;
  /** session/subscribe from subscribe() without afterSeq: continue after the last
   * seq delivered when the frame is sent (not when it was asked for) */
  continues: boolean;
  /** its share of the queue's bytes while it waits */
  bytes: number;
  /** its id once sent */
  id?: number;
  /** settles the caller's promise (once; later calls do nothing) */
  resolve: (data: unknown) => void;
  reject: (err: Error) => void;
}

/** Options of one request. */
export interface RequestOptions {
  /** Gives up on the reply: the promise rejects with the signal's reason (the proxy
   * may still run the request). E.g. AbortSignal.timeout(10_000). */
  signal?: AbortSignal;
}

interface PermissionState {
  session: string;
  abort: AbortController;
  /** the decision, once the callback gave it: re-sent if the request comes again after a reconnect */
  decision?: PermissionDecision;
}

/**
 * Aborts the callback's signal of a request resolved without it (elsewhere,
 * timed out, its session closed, the client closed); a callback that already
 * gave its decision is left alone: its own answer is not "elsewhere".
 */
function abandon(p: PermissionState): void {
  if (p.decision === undefined) p.abort.abort();
}

/** WebSocket.OPEN */
const OPEN = 1;

const TOKEN_RE = /^[A-Za-z0-9._~-]{16,512}$/;

/** Connects to a proxy and resolves once its hello arrived. `url` is the proxy's
 * base URL (http://127.0.0.1:PORT, as `ccproxy serve` prints it) or its websocket
 * URL (ws://127.0.0.1:PORT/v1/ws). The token goes in a subprotocol, never in the URL.
 * A first connection that fails rejects; later drops reconnect by themselves. */
export async function connect(url: string, token: string, options: ConnectOptions = {}): Promise<CcproxyClient> {
  const client = new CcproxyClient(url, token, options);
  await client.opened;
  return client;
}

/** A connection to ccproxy. Create it with connect(). */
export class CcproxyClient {
  /** the websocket URL */
  readonly url: string;
  /** the http(s) base URL blobs are fetched from */
  readonly baseURL: string;
  #hello: HelloData | undefined;
  /** The hello of the current connection (protocol, capabilities, limits). */
  get hello(): HelloData | undefined {
    return this.#hello;
  }

  /** Resolves once the first hello arrived; rejects if the first connection fails. */
  readonly opened: Promise<void>;

  readonly #token: string;
  readonly #WebSocket: WebSocketConstructor;
  readonly #fetch: FetchLike | undefined;
  readonly #backoff: Required<Omit<Backoff, "wait">> & { wait: Backoff["wait"] | undefined };
  readonly #maxQueued: number;
  readonly #maxQueuedBytes: number;
  readonly #onStatus: ((status: ConnectionStatus, detail?: string) => void) | undefined;
  readonly #onError: (err: Error) => void;

  #ws: WebSocketLike | undefined;
  /** true from hello until the socket drops */
  #ready = false;
  /** true while resubscribing after a reconnect: requests wait in #queue */
  #resuming = false;
  #closed = false;
  #everOpened = false;
  #attempt = 0;
  readonly #stop = new AbortController();
  #openedResolve!: () => void;
  #openedReject!: (err: Error) => void;

  #nextId = 1;
  readonly #pending = new Map<number, Request>();
  readonly #queue: Request[] = [];
  #queuedBytes = 0;

  /** sessions subscribed on this client → the last seq delivered to handlers */
  readonly #lastSeq = new Map<string, number>();
  readonly #eventHandlers = new Map<string, Set<Handler<SessionEventData>>>();
  readonly #gapHandlers = new Set<Handler<SessionGapData>>();
  readonly #pushHandlers = new Map<PushType, Set<Handler<never>>>();
  #permissionHandler: PermissionHandler | undefined;
  readonly #permissions = new Map<string, PermissionState>();

  constructor(url: string, token: string, options: ConnectOptions = {}) {
    if (!TOKEN_RE.test(token)) {
      throw new TypeError("ccproxy: the token must be 16 to 512 characters from A-Z a-z 0-9 . _ ~ -");
    }
    const u = new URL(url);
    if (u.protocol === "http:" || u.protocol === "https:") {
      u.protocol = u.protocol === "http:" ? "ws:" : "wss:";
      if (u.pathname === "/" || u.pathname === "") u.pathname = "/v1/ws";
    } else if (u.protocol !== "ws:" && u.protocol !== "wss:") {
      throw new TypeError(`ccproxy: url ${JSON.stringify(url)}: want http(s):// or ws(s)://`);
    }
    if (u.username || u.password || u.search.includes("token")) {
      throw new TypeError("ccproxy: the url must not carry credentials: pass the token as the second argument");
    }
    this.url = u.toString();
    this.baseURL = `${u.protocol === "wss:" ? "https:" : "http:"}//${u.host}/`;
    this.#token = token;
    const WS = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (WS === undefined) {
      throw new TypeError("ccproxy: no global WebSocket (Node < 22): pass options.WebSocket, e.g. the `ws` package's");
    }
    this.#WebSocket = WS;
    this.#fetch = options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch;
    const b = options.backoff ?? {};
    this.#backoff = {
      initialMs: b.initialMs ?? 250,
      maxMs: b.maxMs ?? 5000,
      factor: b.factor ?? 2,
      jitter: b.jitter ?? 0.2,
      wait: b.wait,
    };
    this.#maxQueued = options.maxQueuedRequests ?? 1000;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? 64 << 20;
    this.#onStatus = options.onStatus;
    this.#onError = options.onError ?? ((err) => console.error(err));
    this.opened = new Promise<void>((resolve, reject) => {
      this.#openedResolve = resolve;
      this.#openedReject = reject;
    });
    this.opened.catch(() => {}); // reported to whoever awaits it; never an unhandled rejection
    this.#open();
  }

  // ---------------------------------------------------------------- requests

  /** Sends a request and resolves with its reply's data, typed by method. An
   * error reply rejects with ProtocolFailure (also, without sending it, a frame
   * over the proxy's maxFrameBytes); a drop before the reply with
   * ConnectionClosedError. While the client reconnects, the request waits. */
  request<M extends RequestType>(method: M, params: RequestData<M>, options: RequestOptions = {}): Promise<ResultData<M>> {
    return this.#request(method, params, false, options.signal);
  }

  #request<M extends RequestType>(method: M, params: RequestData<M>, continues: boolean, signal?: AbortSignal): Promise<ResultData<M>> {
    return new Promise<ResultData<M>>((resolve, reject) => {
      if (this.#closed) {
        reject(new ConnectionClosedError(`${method}: the client is closed`));
        return;
      }
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      let settled = false;
      const onAbort = () => this.#abandon(req, signal?.reason);
      const done = () => {
        settled = true;
        signal?.removeEventListener("abort", onAbort);
      };
      const req: Request = {
        method,
        params,
        continues,
        bytes: 0,
        resolve: (d) => {
          if (settled) return;
          done();
          resolve(d as ResultData<M>);
        },
        reject: (err) => {
          if (settled) return;
          done();
          reject(err);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      // Wait for the connection while reconnecting, and when the socket is
      // already closing (its close event not yet delivered).
      if (!this.#ready || this.#resuming || this.#ws?.readyState !== OPEN) {
        this.#enqueue(req);
        return;
      }
      this.#send(req);
    });
  }

  #enqueue(req: Request): void {
    req.bytes = JSON.stringify(req.params)?.length ?? 0;
    if (this.#queue.length >= this.#maxQueued || this.#queuedBytes + req.bytes > this.#maxQueuedBytes) {
      req.reject(
        new ConnectionClosedError(
          `${req.method}: not connected, and the requests waiting for the connection are at their bound ` +
            `(${this.#queue.length} of ${this.#maxQueued}, ${this.#queuedBytes} of ${this.#maxQueuedBytes} bytes)`,
        ),
      );
      return;
    }
    this.#queuedBytes += req.bytes;
    this.#queue.push(req);
  }

  /** Takes every waiting request out of the queue. */
  #dequeueAll(): Request[] {
    this.#queuedBytes = 0;
    return this.#queue.splice(0);
  }

  /** Gives up on a request (its signal aborted): out of the queue or the pending map. */
  #abandon(req: Request, reason: unknown): void {
    const i = this.#queue.indexOf(req);
    if (i >= 0) {
      this.#queue.splice(i, 1);
      this.#queuedBytes -= req.bytes;
    }
    if (req.id !== undefined && this.#pending.get(req.id) === req) this.#pending.delete(req.id);
    req.reject(reason instanceof Error ? reason : new Error(String(reason)));
  }

  /** Subscribes to a session's events. Without afterSeq it continues after the
   * last seq this client delivered for the session (0 the first time), so a
   * repeated subscribe delivers nothing twice; with afterSeq the events after
   * it are delivered again. After a reconnect the client resubscribes by itself. */
  subscribe(session: string, afterSeq?: number): Promise<SessionSubscribeResult> {
    if (afterSeq !== undefined) return this.request("session/subscribe", { session, afterSeq });
    return this.#request("session/subscribe", { session }, true);
  }

  /** Stops the session's events on this connection and forgets its last seq. */
  async unsubscribe(session: string): Promise<void> {
    await this.request("session/unsubscribe", { session });
  }

  /** The last seq delivered to handlers for a session (0: none). */
  lastSeq(session: string): number {
    return this.#lastSeq.get(session) ?? 0;
  }

  // ---------------------------------------------------------------- handlers

  /** Calls handler with each event of the session, in seq order, each seq once
   * (session "*": every session). Returns a function that removes it. */
  onEvent(session: string, handler: Handler<SessionEventData>): () => void {
    let set = this.#eventHandlers.get(session);
    if (set === undefined) this.#eventHandlers.set(session, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Calls handler when events of a session were lost: the proxy's replay log no
   * longer reaches back to them (session/gap), or, which a correct proxy never
   * does, an event arrived after a hole in the seq numbers. Events resume at firstSeq. */
  onGap(handler: Handler<SessionGapData>): () => void {
    this.#gapHandlers.add(handler);
    return () => this.#gapHandlers.delete(handler);
  }

  /** Answers permission requests of subscribed sessions with the callback's
   * decision (one callback; a new one replaces it). A request is asked once even
   * if it comes again after a reconnect; the same decision is re-sent then. A
   * callback that throws denies the request. */
  onPermission(handler: PermissionHandler | undefined): void {
    this.#permissionHandler = handler;
  }

  /** Calls handler with every push of a type (session/event after the seq filter). */
  on<T extends PushType>(type: T, handler: Handler<Pushes[T]>): () => void {
    let set = this.#pushHandlers.get(type) as Set<Handler<Pushes[T]>> | undefined;
    if (set === undefined) {
      set = new Set();
      this.#pushHandlers.set(type, set as Set<Handler<never>>);
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  // ---------------------------------------------------------------- blobs

  /** An attachment's bytes: fetched (an Attachment, or its url, relative to the
   * proxy) with the token as Authorization: Bearer, or decoded when the
   * attachment carries them inline (data). Rejects with ProtocolFailure
   * on an HTTP error (not_found once the blob store evicted it). */
  async blob(attachment: Attachment | string, init: { signal?: AbortSignal } = {}): Promise<Blob> {
    if (typeof attachment !== "string" && attachment.data !== undefined) {
      // Inlined (base64) by a proxy that inlines attachments: nothing to fetch.
      const bin = atob(attachment.data);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      return new Blob([bytes], attachment.mediaType ? { type: attachment.mediaType } : {});
    }
    const ref = typeof attachment === "string" ? attachment : attachment.url;
    if (ref === undefined) {
      throw new TypeError(`ccproxy: the attachment has no url${typeof attachment !== "string" && attachment.error ? ": " + attachment.error : ""}`);
    }
    const url = new URL(ref, this.baseURL);
    if (url.origin !== new URL(this.baseURL).origin) {
      throw new TypeError(`ccproxy: ${url.toString()} is not on the proxy (${this.baseURL}): the token is not sent elsewhere`);
    }
    if (this.#fetch === undefined) throw new TypeError("ccproxy: no global fetch: pass options.fetch");
    const res = await this.#fetch(url.toString(), {
      headers: { Authorization: `Bearer ${this.#token}` },
      ...(init.signal ? { signal: init.signal } : {}),
    });
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      let error: ProtocolError = { code: res.status === 404 ? "not_found" : "internal", message: `HTTP ${res.status} ${res.statusText}` };
      try {
        const body = JSON.parse(text) as { error?: ProtocolError };
        if (body.error && typeof body.error.code === "string") error = body.error;
      } catch {
        // not JSON: keep the status line
      }
      throw new ProtocolFailure(error, `GET ${url.pathname}`);
    }
    return res.blob();
  }

  // ---------------------------------------------------------------- closing

  /** Closes the connection for good: stops reconnecting, rejects pending and
   * waiting requests, aborts permission callbacks. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop.abort();
    this.#ready = false;
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws !== undefined) {
      try {
        ws.close(1000);
      } catch {
        // already closing
      }
    }
    this.#failPending("the client was closed");
    for (const q of this.#dequeueAll()) q.reject(new ConnectionClosedError(`${q.method}: the client was closed`));
    for (const p of this.#permissions.values()) abandon(p);
    this.#permissions.clear();
    if (!this.#everOpened) this.#openedReject(new ConnectionClosedError("ccproxy: closed before the connection opened"));
    this.#status("closed", "closed by the client");
  }

  // ---------------------------------------------------------------- internals

  #open(): void {
    let ws: WebSocketLike;
    try {
      ws = new this.#WebSocket(this.url, [SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + this.#token]);
    } catch (err) {
      this.#dropped(undefined, `cannot open ${this.url}: ${this.#redact((err as Error).message)}`);
      return;
    }
    this.#ws = ws;
    let errorText = "";
    ws.addEventListener("error", (ev) => {
      const msg = (ev as { message?: unknown; error?: { message?: unknown } }).message ?? (ev as { error?: { message?: unknown } }).error?.message;
      if (typeof msg === "string") errorText = this.#redact(msg);
    });
    ws.addEventListener("message", (ev) => {
      if (this.#ws !== ws) return; // a frame of a socket we already gave up on
      if (typeof ev.data !== "string") {
        this.#onError(new Error("ccproxy: a binary frame from the proxy was ignored"));
        return;
      }
      this.#receive(ws, ev.data);
    });
    ws.addEventListener("close", (ev) => {
      if (this.#ws !== ws) return;
      const why = `closed with ${ev.code}${ev.reason ? " " + ev.reason : ""}${errorText ? " (" + errorText + ")" : ""}`;
      this.#dropped(ws, why);
    });
  }

  /** Takes the token out of a text from the WebSocket implementation (it is in a subprotocol). */
  #redact(text: string): string {
    return text.split(this.#token).join("<token>");
  }

  /** The socket ws is gone (undefined: it could not even be made). */
  #dropped(ws: WebSocketLike | undefined, why: string): void {
    if (ws !== undefined && this.#ws !== ws) return;
    this.#ws = undefined;
    this.#ready = false;
    this.#resuming = false;
    this.#failPending(`the connection ${why}`);
    if (this.#closed) return;
    if (!this.#everOpened) {
      // The first connection: report it (a wrong URL or token, a proxy that is not running).
      this.#closed = true;
      this.#stop.abort();
      for (const q of this.#dequeueAll()) q.reject(new ConnectionClosedError(`${q.method}: could not connect`));
      this.#openedReject(
        new ConnectionClosedError(`ccproxy: could not connect to ${this.url}: ${why}; check the URL, that the proxy runs, and the token`),
      );
      this.#status("closed", why);
      return;
    }
    this.#attempt++;
    this.#status("reconnecting", why);
    void this.#waitBackoff(this.#attempt).then(
      () => {
        if (!this.#closed) this.#open();
      },
      () => {}, // aborted by close()
    );
  }

  #waitBackoff(attempt: number): Promise<void> {
    const signal = this.#stop.signal;
    if (this.#backoff.wait) return this.#backoff.wait(attempt, signal);
    const { initialMs, maxMs, factor, jitter } = this.#backoff;
    const base = Math.min(maxMs, initialMs * Math.pow(factor, attempt - 1));
    const ms = Math.max(0, base * (1 + jitter * (2 * Math.random() - 1)));
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #failPending(why: string): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(new ConnectionClosedError(`${p.method}: ${why}; the proxy may or may not have run it`));
  }

  /** Writes a request on the current socket and files it as pending. */
  #send(req: Request): void {
    const ws = this.#ws;
    if (ws === undefined) {
      req.reject(new ConnectionClosedError(`${req.method}: not connected`));
      return;
    }
    const method = req.method;
    let params = req.params;
    const session = (params as { session?: unknown }).session;
    const before = typeof session === "string" ? this.#lastSeq.get(session) : undefined;
    if (req.continues) params = { ...(params as object), afterSeq: before ?? 0 };
    const id = this.#nextId++;
    const text = JSON.stringify({ type: method, id, data: params });
    const max = this.#hello?.limits.maxFrameBytes;
    if (max !== undefined && text.length * 3 > max) {
      const bytes = new TextEncoder().encode(text).length;
      if (bytes > max) {
        req.reject(
          new ProtocolFailure(
            { code: "frame_too_large", message: `the frame is ${bytes} bytes, over the proxy's limit of ${max} (hello.limits.maxFrameBytes); it was not sent` },
            method,
          ),
        );
        return;
      }
    }
    if (method === "session/subscribe" && typeof session === "string") {
      // The session is remembered from now on (so that a drop before the reply
      // resubscribes it); a refused subscription leaves it as it was. An
      // explicit afterSeq is a deliberate replay: the reply, which comes before
      // the replayed events, moves the session back to it. Until then, events
      // of an earlier subscription still count as they come.
      const afterSeq = (params as { afterSeq?: number }).afterSeq ?? 0;
      if (before === undefined) this.#lastSeq.set(session, afterSeq);
      const { resolve, reject } = req;
      req.resolve = (d) => {
        if (!req.continues) this.#lastSeq.set(session, afterSeq);
        resolve(d);
      };
      req.reject = (err) => {
        if (err instanceof ProtocolFailure && before === undefined) this.#lastSeq.delete(session);
        reject(err);
      };
    } else if ((method === "session/unsubscribe" || method === "session/close") && typeof session === "string") {
      const resolve = req.resolve;
      req.resolve = (d) => {
        this.#forget(session);
        resolve(d);
      };
    }
    req.id = id;
    this.#pending.set(id, req);
    try {
      ws.send(text);
    } catch (err) {
      this.#pending.delete(id);
      req.reject(new ConnectionClosedError(`${method}: ${(err as Error).message}`));
    }
  }

  #forget(session: string): void {
    this.#lastSeq.delete(session);
    for (const [id, p] of this.#permissions) {
      if (p.session === session) {
        abandon(p);
        this.#permissions.delete(id);
      }
    }
  }

  #receive(ws: WebSocketLike, text: string): void {
    let frame: { type?: unknown; id?: unknown; ok?: unknown; data?: unknown; error?: ProtocolError };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      this.#onError(new Error(`ccproxy: a frame from the proxy is not JSON: ${text.slice(0, 80)}`));
      return;
    }
    if (frame === null || typeof frame !== "object" || typeof frame.type !== "string") {
      this.#onError(new Error(`ccproxy: a frame from the proxy has no type: ${text.slice(0, 80)}`));
      return;
    }
    if (frame.type === "reply") {
      const waiter = typeof frame.id === "number" ? this.#pending.get(frame.id) : undefined;
      if (waiter === undefined) {
        // id null: the proxy could not read a frame's id (not within the
        // first 4 KiB of a frame it discarded, ...); no request can be told.
        // Other ids: abandoned.
        if (frame.id === null && frame.ok === false && frame.error) this.#onError(new ProtocolFailure(frame.error, "(a frame the proxy could not read)"));
        return;
      }
      this.#pending.delete(frame.id as number);
      if (frame.ok === true) waiter.resolve(frame.data ?? {});
      else waiter.reject(new ProtocolFailure(frame.error ?? { code: "internal", message: "error reply without error" }, waiter.method));
      return;
    }
    const data = (frame.data ?? {}) as Record<string, unknown>;
    switch (frame.type) {
      case "hello":
        this.#onHello(ws, data as unknown as HelloData);
        return;
      case "session/event":
        this.#event(data as unknown as SessionEventData);
        return;
      case "session/gap":
        this.#gap(data as unknown as SessionGapData);
        return;
      case "permission/request":
        this.#dispatch("permission/request", data as unknown as PermissionRequestData);
        this.#permissionRequest(data as unknown as PermissionRequestData);
        return;
      case "permission/resolved": {
        const r = data as unknown as PermissionResolvedData;
        const p = this.#permissions.get(r.requestId);
        if (p !== undefined) {
          abandon(p);
          this.#permissions.delete(r.requestId);
        }
        this.#dispatch("permission/resolved", r);
        return;
      }
      case "session/state":
        this.#dispatch("session/state", data as unknown as SessionStateData);
        // A closed session's id is unknown from now on: nothing to resume.
        if ((data as unknown as SessionStateData).state === "closed") this.#forget((data as unknown as SessionStateData).session);
        return;
      default:
        this.#dispatch(frame.type as PushType, data as never); // unknown push types reach no handler
    }
  }

  #onHello(ws: WebSocketLike, hello: HelloData): void {
    if (hello.protocol !== PROTOCOL_VERSION) {
      const err = new Error(`ccproxy: the proxy speaks protocol ${JSON.stringify(hello.protocol)}, this client ${PROTOCOL_VERSION}`);
      this.#onError(err);
      this.#ws = undefined;
      ws.close(1000);
      this.#closed = true;
      this.#stop.abort();
      this.#failPending("was closed: unsupported protocol");
      for (const q of this.#dequeueAll()) q.reject(err);
      if (!this.#everOpened) this.#openedReject(err);
      this.#status("closed", err.message);
      return;
    }
    this.#hello = hello;
    this.#ready = true;
    this.#attempt = 0;
    const reconnect = this.#everOpened;
    this.#resuming = reconnect; // requests made by hello handlers wait for the resubscriptions
    this.#dispatch("hello", hello);
    if (!reconnect) {
      this.#everOpened = true;
      this.#status("open");
      this.#openedResolve();
      this.#flush();
      return;
    }
    void this.#resume(ws);
  }

  /** After a reconnect: resubscribe every session after its last delivered seq, then send what waited. */
  async #resume(ws: WebSocketLike): Promise<void> {
    const resubscribed = [...this.#lastSeq.keys()].map(
      (session) =>
        new Promise<void>((done) => {
          this.#send({
            method: "session/subscribe",
            params: { session },
            continues: true,
            bytes: 0,
            resolve: () => done(),
            reject: (err) => {
              if (err instanceof ProtocolFailure) {
                // unknown_session: closed or reaped meanwhile; stop resuming it.
                this.#forget(session);
                this.#onError(new Error(`ccproxy: could not resume session ${session}: ${err.message}`));
              }
              done(); // a ConnectionClosedError: the next hello resumes it
            },
          });
        }),
    );
    await Promise.all(resubscribed);
    if (this.#ws !== ws || this.#closed) return; // dropped again: the next hello resumes
    this.#resuming = false;
    this.#status("open");
    this.#flush();
  }

  #flush(): void {
    for (const req of this.#dequeueAll()) this.#send(req);
  }

  #event(ev: SessionEventData): void {
    const last = this.#lastSeq.get(ev.session);
    if (last === undefined) return; // not subscribed by this client (or unsubscribed meanwhile)
    if (ev.seq <= last) return; // seen already
    if (ev.seq !== last + 1) this.#gap({ session: ev.session, firstSeq: ev.seq });
    this.#lastSeq.set(ev.session, ev.seq);
    for (const key of [ev.session, "*"]) {
      for (const h of this.#eventHandlers.get(key) ?? []) this.#call(h, ev);
    }
    this.#dispatch("session/event", ev);
  }

  #gap(g: SessionGapData): void {
    const last = this.#lastSeq.get(g.session);
    if (last !== undefined && g.firstSeq - 1 > last) this.#lastSeq.set(g.session, g.firstSeq - 1);
    for (const h of this.#gapHandlers) this.#call(h, g);
    this.#dispatch("session/gap", g);
  }

  #permissionRequest(req: PermissionRequestData): void {
    const handler = this.#permissionHandler;
    if (handler === undefined) return; // another client may answer
    const known = this.#permissions.get(req.requestId);
    if (known !== undefined) {
      // Sent again after a resubscribe: our answer may have been lost with the connection.
      if (known.decision !== undefined) void this.#respond(req, known.decision);
      return;
    }
    const state: PermissionState = { session: req.session, abort: new AbortController() };
    this.#permissions.set(req.requestId, state);
    void (async () => {
      let decision: PermissionDecision;
      try {
        decision = await handler(req, state.abort.signal);
      } catch (err) {
        this.#onError(new Error(`ccproxy: the permission callback failed for ${req.toolName} (${req.requestId}); denying: ${(err as Error).message}`));
        decision = { behavior: "deny", message: "The client's permission handler failed" };
      }
      if (state.abort.signal.aborted || this.#permissions.get(req.requestId) !== state) return; // resolved meanwhile
      state.decision = decision;
      await this.#respond(req, decision);
    })();
  }

  async #respond(req: PermissionRequestData, decision: PermissionDecision): Promise<void> {
    try {
      await this.request("permission/respond", { ...decision, session: req.session, requestId: req.requestId } as PermissionRespondData);
    } catch (err) {
      if (err instanceof ProtocolFailure && (err.code === "already_resolved" || err.code === "not_found")) return;
      if (err instanceof ConnectionClosedError) return; // re-sent when the request comes again after the resubscribe
      this.#onError(err as Error);
    }
  }

  #dispatch<T extends PushType>(type: T, data: Pushes[T]): void {
    for (const h of (this.#pushHandlers.get(type) ?? []) as Set<Handler<Pushes[T]>>) this.#call(h, data);
  }

  #call<T>(h: Handler<T>, data: T): void {
    try {
      h(data);
    } catch (err) {
      this.#onError(err instanceof Error ? err : new Error(String(err)));
    }
  }

  #status(status: ConnectionStatus, detail?: string): void {
    if (this.#onStatus === undefined) return;
    try {
      this.#onStatus(status, detail);
    } catch (err) {
      this.#onError(err as Error);
    }
  }
}
