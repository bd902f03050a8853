// Tests of @ccproxy/client against a real `ccproxy serve --demo` (the binary
// named by $CCPROXY_BIN; protocol/client_test.go builds it and runs
// `node --test` here after compiling the package to dist/). The demo session
// replays a recorded conversation: turn 1 is text, turn 2 shows an image (an
// attachment served at /v1/blobs), turn 3 asks permission for an MCP tool.
//
// No test waits for time to pass: each waits for a condition that frames
// bring about (until()), and reconnects are gated on such conditions too.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";

import { WebSocket } from "ws";

import { CcproxyClient, ConnectionClosedError, ProtocolFailure, connect } from "../dist/index.js";

const BIN = process.env.CCPROXY_BIN;
if (!BIN) throw new Error("CCPROXY_BIN must name a ccproxy binary (protocol/client_test.go sets it)");

const TURNS = [
  "Hi! What does this proxy do, and what am I looking at?",
  "Show me an image from one of the MCP servers.",
  "Now echo a greeting through the demo server.",
];

/** Starts `ccproxy serve --demo` and returns its base URL and token; stopped after the test. */
async function startProxy(t, ...extra) {
  const dir = await mkdtemp(join(tmpdir(), "ccproxy-client-test-"));
  const token = randomBytes(24).toString("base64url");
  const child = spawn(
    BIN,
    ["serve", "--demo", "--demo-speed", "0", "--addr", "127.0.0.1:0", "--no-ui", "--history-home", "-",
      "--spool-dir", join(dir, "spool"), "--project", dir, ...extra],
    { env: { ...process.env, CCPROXY_TOKEN: token }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (s) => {
    stderr = (stderr + s).slice(-8192); // a bounded tail, shown if the proxy fails
  });
  const exited = once(child, "exit");
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    await rm(dir, { recursive: true, force: true });
  });
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([
    once(lines, "line").then(([l]) => l),
    exited.then(([code, signal]) => {
      throw new Error(`ccproxy serve exited (${code ?? signal}) before printing its URL:\n${stderr}`);
    }),
  ]);
  const { url } = JSON.parse(first);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  return { url, token };
}

/**
 * Records what a client delivers and lets a test wait for conditions on it:
 * until(fn) resolves once fn() is true, re-checked after every delivery.
 */
class Recorder {
  events = []; // SessionEventData, in delivery order
  pushes = []; // [type, data] of other pushes
  gaps = [];
  errors = [];
  #waiters = new Set();

  constructor(client, session = "*") {
    client.onEvent(session, (ev) => this.#add(() => this.events.push(ev)));
    client.onGap((g) => this.#add(() => this.gaps.push(g)));
    for (const type of ["permission/request", "permission/resolved", "session/state"]) {
      client.on(type, (d) => this.#add(() => this.pushes.push([type, d])));
    }
  }

  #add(f) {
    f();
    this.check();
  }

  check() {
    for (const w of this.#waiters) {
      if (w.fn()) {
        this.#waiters.delete(w);
        w.resolve();
      }
    }
  }

  until(fn) {
    if (fn()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.add({ fn, resolve }));
  }

  results() {
    return this.events.filter((e) => e.event.type === "result").length;
  }

  seqs() {
    return this.events.map((e) => e.seq);
  }
}

/** A `ws` WebSocket class whose sockets the test can reach (to cut them). */
function trackedWebSocket() {
  const sockets = [];
  class Tracked extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols);
      sockets.push(this);
    }
  }
  return { Tracked, sockets };
}

/** Runs the demo's turns 1..n in a session, each after the previous one's result. */
async function playTurns(client, rec, session, n) {
  for (let i = 0; i < n; i++) {
    const before = rec.results();
    await client.request("session/send", { session, text: TURNS[i] });
    await rec.until(() => rec.results() > before);
  }
}

function assertExactlyOnce(seqs, last) {
  assert.deepEqual(seqs, Array.from({ length: last }, (_, i) => i + 1), "every seq from 1 to the last, once, in order");
}

const quiet = (rec) => (err) => rec.errors.push(err);

// startObserved starts a proxy and connects a plain client to it (closed when
// the test ends) with a Recorder of what it receives.
async function startObserved(t) {
  const { url, token } = await startProxy(t);
  const observer = await connect(url, token, { WebSocket });
  t.after(() => observer.close());
  return { url, token, observer, ref: new Recorder(observer) };
}

test("a socket dropped mid-turn resumes with every event exactly once", { timeout: 120_000 }, async (t) => {
  // The observer never drops: its events are the reference.
  const { url, token, observer, ref } = await startObserved(t);

  // The client under test: its sockets can be cut, and its reconnects wait
  // for a gate the test opens.
  const { Tracked, sockets } = trackedWebSocket();
  let openGate;
  const gate = new Promise((resolve) => (openGate = resolve));
  const statuses = [];
  let onReconnecting = () => {};
  const client = await connect(url, token, {
    WebSocket: Tracked,
    backoff: { wait: () => gate },
    onStatus: (s) => {
      statuses.push(s);
      if (s === "reconnecting") onReconnecting();
    },
    onError: (err) => rec.errors.push(err),
  });
  t.after(() => client.close());
  const rec = new Recorder(client);

  const { session } = await client.request("session/create", {});
  await observer.subscribe(session);
  await client.subscribe(session);
  await playTurns(client, rec, session, 2);
  await ref.until(() => ref.results() === 2);

  // Turn 3 stops at a permission request, mid-turn. Cut the client's socket
  // there (no close frame), wait until it knows, and only then let the
  // observer answer: the rest of the turn happens while the client is away.
  const away = new Promise((resolve) => (onReconnecting = resolve));
  let seenAtDrop = -1;
  client.on("permission/request", () => {
    if (seenAtDrop >= 0) return; // only the first socket is cut
    seenAtDrop = rec.events.length;
    sockets.at(-1).terminate();
  });
  const request = new Promise((resolve) => observer.on("permission/request", resolve));
  // The observer sends the turn: the permission request may overtake the
  // reply to session/send, and the client's socket is cut when it arrives.
  await observer.request("session/send", { session, text: TURNS[2] });
  const req = await request;
  await away;
  assert.equal(rec.results(), 2, "the drop happened mid-turn");
  await observer.request("permission/respond", { session, requestId: req.requestId, behavior: "allow" });
  await ref.until(() => ref.results() === 3);
  assert.equal(rec.results(), 2, "the client missed the end of the turn while away");
  const missed = ref.events.length - seenAtDrop;
  assert.ok(missed > 5, `only ${missed} events happened while away`);

  // Requests made while away wait for the connection and succeed; a
  // subscribe continues after the last seq delivered when it is sent.
  const list = client.request("session/list", {});
  const resub = client.subscribe(session);
  openGate();
  await rec.until(() => rec.results() === 3);
  const { sessions } = await list;
  assert.equal(sessions.length, 1);
  await resub;
  await client.request("session/list", {}); // after anything the resubscribe sent

  const last = ref.events.at(-1).seq;
  assertExactlyOnce(ref.seqs(), last);
  assertExactlyOnce(rec.seqs(), last);
  assert.deepEqual(rec.events, ref.events, "the same events as a client that never dropped");
  assert.equal(client.lastSeq(session), last);
  assert.equal(sockets.length, 2, "one reconnect");
  assert.deepEqual(statuses, ["open", "reconnecting", "open"]);
  assert.deepEqual(rec.gaps, []);
  assert.deepEqual(rec.errors, []);
});

test("sockets dropped again and again while events stream: each seq once", { timeout: 120_000 }, async (t) => {
  const { url, token, observer, ref } = await startObserved(t);

  const { Tracked, sockets } = trackedWebSocket();
  const client = await connect(url, token, { WebSocket: Tracked, backoff: { initialMs: 1, maxMs: 5, jitter: 0 } });
  t.after(() => client.close());
  const rec = new Recorder(client);
  client.onPermission(() => ({ behavior: "allow" }));

  const { session } = await client.request("session/create", {});
  await observer.subscribe(session);
  await client.subscribe(session);
  // Cut each socket at the 10th event it delivers, in the middle of a batch
  // of frames (frames it had already read are still delivered after the
  // cut). The observer sends the turns, so no request of the client is cut
  // off (one that is may or may not have run). Each turn has more than 10
  // events, and the client catches up before the next: at least one cut a turn.
  let drops = 0;
  let socketSeen = 0;
  let delivered = 0;
  client.onEvent(session, () => {
    if (sockets.length !== socketSeen) {
      socketSeen = sockets.length;
      delivered = 0;
    }
    delivered++;
    if (delivered >= 10 && drops < 12 && sockets.at(-1).readyState === WebSocket.OPEN) {
      drops++;
      sockets.at(-1).terminate();
    }
  });
  for (let i = 0; i < 3; i++) {
    const before = ref.results();
    await observer.request("session/send", { session, text: TURNS[i] });
    await ref.until(() => ref.results() > before);
    const seq = ref.events.at(-1).seq;
    await rec.until(() => client.lastSeq(session) === seq);
  }
  const last = ref.events.at(-1).seq;
  await rec.until(() => client.lastSeq(session) === last);
  assert.ok(drops >= 3, `the socket was cut ${drops} times`);
  // The last cut socket may have delivered the last event itself (from frames it had read).
  assert.ok(sockets.length === drops || sockets.length === drops + 1, `${sockets.length} sockets for ${drops} cuts`);
  assertExactlyOnce(rec.seqs(), last);
  assert.deepEqual(rec.events, ref.events);
});

test("subscribing again delivers nothing twice; an explicit afterSeq replays", { timeout: 60_000 }, async (t) => {
  const { url, token, observer: first, ref: rec1 } = await startObserved(t);
  const { session } = await first.request("session/create", {});
  await first.subscribe(session);
  await playTurns(first, rec1, session, 1);
  const last = rec1.events.at(-1).seq;

  // A socket that delivers every session/event frame twice, as a proxy
  // replaying what the client already has would.
  class Doubling extends WebSocket {
    addEventListener(type, listener, options) {
      if (type !== "message") return super.addEventListener(type, listener, options);
      return super.addEventListener(type, (ev) => {
        listener(ev);
        if (JSON.parse(ev.data).type === "session/event") listener(ev);
      }, options);
    }
  }
  const doubled = await connect(url, token, { WebSocket: Doubling });
  t.after(() => doubled.close());
  const recD = new Recorder(doubled);
  await doubled.subscribe(session);
  await recD.until(() => doubled.lastSeq(session) === last);
  assertExactlyOnce(recD.seqs(), last);

  // Two subscribes sent before any event comes back: the proxy replays the
  // log for the first and, unless the second replaced it before it was
  // sent, again for the second. Count the frames before the seq filter.
  const { Tracked, sockets } = trackedWebSocket();
  const client = await connect(url, token, { WebSocket: Tracked });
  t.after(() => client.close());
  let frames = 0;
  sockets[0].addEventListener("message", (ev) => {
    if (JSON.parse(ev.data).type === "session/event") frames++;
  });
  const rec = new Recorder(client);
  await Promise.all([client.subscribe(session), client.subscribe(session)]);
  await rec.until(() => client.lastSeq(session) === last);
  await client.request("session/list", {}); // after any second replay
  assert.ok(frames >= last && frames <= 2 * last, `${frames} event frames for ${last} events`);
  assertExactlyOnce(rec.seqs(), last);

  // An explicit afterSeq is a deliberate replay of what came after it.
  await client.subscribe(session, last - 3);
  await rec.until(() => rec.events.length === last + 3);
  assert.deepEqual(rec.seqs().slice(last), [last - 2, last - 1, last]);

  // The same while events stream live: events of the old subscription count
  // until the reply, then the replay starts over from afterSeq, without a gap.
  const live = await connect(url, token, { WebSocket });
  t.after(() => live.close());
  const recL = new Recorder(live);
  await live.subscribe(session);
  await recL.until(() => live.lastSeq(session) === last);
  let replay;
  live.onEvent(session, (ev) => {
    if (replay === undefined && ev.seq === last + 20) replay = live.subscribe(session, 0);
  });
  await first.request("session/send", { session, text: TURNS[1] });
  await rec1.until(() => rec1.results() === 2);
  const end = rec1.events.at(-1).seq;
  await recL.until(() => replay !== undefined);
  await replay;
  await recL.until(() => live.lastSeq(session) === end);
  const seqs = recL.seqs();
  const restart = seqs.findIndex((seq, i) => i > 0 && seq < seqs[i - 1]);
  assert.ok(restart >= last + 20, `the replay restarted after ${restart} events`);
  assertExactlyOnce(seqs.slice(0, restart), seqs[restart - 1]);
  assertExactlyOnce(seqs.slice(restart), end);
  assert.deepEqual(recL.gaps, []);
});

test("the permission callback's decision is sent: a denial", { timeout: 60_000 }, async (t) => {
  const { url, token, observer: client, ref: rec } = await startObserved(t);
  const { session } = await client.request("session/create", {});
  await client.subscribe(session);
  const asked = [];
  const signals = [];
  client.onPermission(async (req, signal) => {
    asked.push(req);
    signals.push(signal);
    assert.equal(signal.aborted, false);
    await Promise.resolve(); // an async decision, as a UI would give
    return { behavior: "deny", message: "Not this one, thanks" };
  });
  await playTurns(client, rec, session, 3);

  assert.equal(asked.length, 1);
  // Resolved by this client's own answer, not elsewhere: the signal stays quiet.
  assert.equal(signals[0].aborted, false, "the signal aborted after the callback's own answer");
  assert.equal(asked[0].session, session);
  assert.deepEqual(asked[0].mcp, { server: "demo", tool: "echo" });
  const resolved = rec.pushes.filter(([type]) => type === "permission/resolved").map(([, d]) => d);
  assert.equal(resolved.length, 1);
  assert.equal(resolved[0].requestId, asked[0].requestId);
  assert.equal(resolved[0].behavior, "deny");
  const result = rec.events.at(-1).event;
  assert.equal(result.type, "result");
  assert.equal(result.permission_denials.length, 1, "claude was told the tool was denied");
  const denied = rec.events.find((e) => e.event.type === "user" && JSON.stringify(e.event).includes("Not this one, thanks"));
  assert.ok(denied, "the denial's message reached claude as the tool result");
});

test("a permission request pending across a reconnect is asked once and answered", { timeout: 60_000 }, async (t) => {
  const { url, token } = await startProxy(t);
  const { Tracked, sockets } = trackedWebSocket();
  const errors = [];
  let onOpen = () => {};
  let opens = 0;
  const client = await connect(url, token, {
    WebSocket: Tracked,
    backoff: { initialMs: 1, maxMs: 1, jitter: 0 },
    onStatus: (s) => {
      if (s === "open" && ++opens === 2) onOpen();
    },
    onError: (err) => errors.push(err),
  });
  t.after(() => client.close());
  const rec = new Recorder(client);
  const { session } = await client.request("session/create", {});
  await client.subscribe(session);
  await playTurns(client, rec, session, 2);

  // The callback cuts the socket and decides only once the client is back
  // (resubscribed, so the proxy has sent the still pending request again).
  const reopened = new Promise((resolve) => (onOpen = resolve));
  const asked = [];
  client.onPermission(async (req) => {
    asked.push(req.requestId);
    sockets.at(-1).terminate();
    await reopened;
    return { behavior: "allow" };
  });
  const requests = [];
  client.on("permission/request", (req) => requests.push(req.requestId));
  const resolved = [];
  client.on("permission/resolved", (r) => resolved.push(r));
  await client.request("session/send", { session, text: TURNS[2] }).catch((err) => {
    // The request may be cut off with the socket (after the proxy got it: the turn goes on).
    assert.ok(err instanceof ConnectionClosedError, String(err));
  });
  await rec.until(() => rec.results() === 3);

  assert.equal(requests.length, 2, "the proxy sent the pending request again after the resubscribe");
  assert.equal(requests[0], requests[1]);
  assert.deepEqual(asked, [requests[0]], "the callback was asked once");
  assert.equal(resolved.length, 1);
  assert.equal(resolved[0].behavior, "allow");
  assert.equal(sockets.length, 2);
  assertExactlyOnce(rec.seqs(), rec.events.at(-1).seq);
  assert.deepEqual(errors, []);
});

test("a gap is surfaced when the replay log no longer reaches back", { timeout: 60_000 }, async (t) => {
  // Tiny replay budgets: the proxy keeps only the newest few KiB of events.
  const { url, token } = await startProxy(t, "--replay-bytes", "4096", "--replay-disk-bytes", "4096");
  const first = await connect(url, token, { WebSocket });
  t.after(() => first.close());
  const rec1 = new Recorder(first);
  const { session } = await first.request("session/create", {});
  await first.subscribe(session);
  await playTurns(first, rec1, session, 1);
  assert.deepEqual(rec1.gaps, []);

  const late = await connect(url, token, { WebSocket });
  t.after(() => late.close());
  const rec2 = new Recorder(late);
  const sub = await late.subscribe(session);
  assert.ok(sub.firstSeq > 1, `the log still holds seq 1 (firstSeq ${sub.firstSeq}): budgets too large for the test`);
  const last = rec1.events.at(-1).seq;
  await rec2.until(() => late.lastSeq(session) === last);
  assert.deepEqual(rec2.gaps, [{ session, firstSeq: sub.firstSeq }]);
  assert.equal(rec2.events[0].seq, sub.firstSeq, "events resume at the gap's firstSeq");
  assertExactlyOnce(rec2.seqs().map((s) => s - sub.firstSeq + 1), last - sub.firstSeq + 1);
});

test("an error reply rejects the request with the proxy's error", { timeout: 60_000 }, async (t) => {
  const { url, token } = await startProxy(t);
  const client = await connect(url, token, { WebSocket });
  t.after(() => client.close());

  await assert.rejects(client.request("session/send", { session: "s-nosuchsession", text: "hi" }), (err) => {
    assert.ok(err instanceof ProtocolFailure);
    assert.equal(err.code, "unknown_session");
    assert.equal(err.error.code, "unknown_session");
    assert.match(err.error.message, /s-nosuchsession/);
    assert.equal(err.message, `session/send: unknown_session: ${err.error.message}`);
    return true;
  });
  // A frame the types would refuse still reaches the proxy, which says what is wrong and where.
  await assert.rejects(client.request("session/create", { permissionMode: "sometimes" }), (err) => {
    assert.ok(err instanceof ProtocolFailure);
    assert.equal(err.code, "bad_request");
    assert.equal(err.error.details.fields[0].path, "data.permissionMode");
    return true;
  });
  // The connection is still usable.
  assert.deepEqual(await client.request("session/list", {}), { sessions: [] });
});

test("request limits: frames over maxFrameBytes, abort signals, the wait queue; a closed session is not resumed", { timeout: 60_000 }, async (t) => {
  const { url, token } = await startProxy(t, "--max-frame", "65536");
  const { Tracked, sockets } = trackedWebSocket();
  let openGate;
  const gate = new Promise((resolve) => (openGate = resolve));
  const errors = [];
  const client = await connect(url, token, {
    WebSocket: Tracked,
    backoff: { wait: () => gate },
    maxQueuedRequests: 2,
    onError: (err) => errors.push(err),
  });
  t.after(() => client.close());
  assert.equal(client.hello.limits.maxFrameBytes, 65536);
  const { session } = await client.request("session/create", {});
  await client.subscribe(session);

  // 40,000 characters, 80,000 bytes of UTF-8: refused before it is sent
  // (the proxy would read it only to discard it).
  await assert.rejects(client.request("session/send", { session, text: "é".repeat(40_000) }), (err) => {
    assert.ok(err instanceof ProtocolFailure);
    assert.equal(err.code, "frame_too_large");
    assert.match(err.message, /^session\/send: frame_too_large: the frame is 800\d\d bytes, over the proxy's limit of 65536/);
    return true;
  });
  await assert.rejects(client.request("session/list", {}, { signal: AbortSignal.abort(new Error("changed my mind")) }), /changed my mind/);

  // A closed session is forgotten: the reconnect below does not resubscribe it.
  await client.request("session/close", { session });
  assert.equal(client.lastSeq(session), 0);
  sockets[0].terminate();

  // While away, requests wait, at most 2; an aborted one leaves the queue.
  const abandon = new AbortController();
  const abandoned = client.request("session/list", {}, { signal: abandon.signal });
  const second = client.request("session/list", {});
  abandon.abort(new Error("gave up"));
  await assert.rejects(abandoned, /gave up/);
  const third = client.request("session/list", {});
  await assert.rejects(client.request("session/list", {}), (err) => {
    assert.ok(err instanceof ConnectionClosedError);
    assert.match(err.message, /at their bound \(2 of 2,/);
    return true;
  });
  openGate();
  assert.deepEqual(await second, { sessions: [] });
  assert.deepEqual(await third, { sessions: [] });
  assert.equal(sockets.length, 2);
  assert.deepEqual(errors, []);
});

test("a frame the proxy refuses unread (limit_exceeded) rejects its request", { timeout: 60_000 }, async (t) => {
  // Frames of three connections at once, 900 KB each, against a budget of
  // 1 MiB for all: some are refused. The proxy reads the id at the start of
  // a refused frame, so each request settles; none is left to onError.
  const { url, token } = await startProxy(t, "--max-frame", "1048576", "--inbound-bytes", "1048576");
  const errors = [];
  let orphaned;
  const failed = new Promise((_, reject) => (orphaned = reject));
  const clients = await Promise.all([0, 1, 2].map(() => connect(url, token, {
    WebSocket,
    onError: (err) => {
      errors.push(err);
      orphaned(new Error(`a reply reached onError instead of its request: ${err.message}`));
    },
  })));
  t.after(() => clients.forEach((c) => c.close()));
  const { session } = await clients[0].request("session/create", {});
  const text = "y".repeat(900_000);
  let refused = 0;
  for (let round = 0; round < 20 && refused === 0; round++) {
    const outcomes = await Promise.race([
      failed,
      Promise.allSettled(clients.flatMap((c) => [0, 1].map(() => c.request("session/send", { session, text })))),
    ]);
    for (const o of outcomes) {
      if (o.status === "fulfilled") continue;
      assert.ok(o.reason instanceof ProtocolFailure, `${o.reason}`);
      if (o.reason.code === "limit_exceeded") refused++;
    }
  }
  assert.ok(refused > 0, "no frame was refused in 20 rounds: the test did not test the refusal");
  assert.deepEqual(errors, []);
});

test("attachments are fetched as Blobs with the token", { timeout: 60_000 }, async (t) => {
  const { url, token, observer: client, ref: rec } = await startObserved(t);
  const { session } = await client.request("session/create", {});
  await client.subscribe(session);
  await playTurns(client, rec, session, 2);

  const attachments = rec.events
    .filter((e) => e.event.type === "user" && Array.isArray(e.event.message.content))
    .flatMap((e) => e.event.message.content.flatMap((b) => (b.type === "tool_result" ? (b.attachments ?? []) : [])));
  assert.ok(attachments.length > 0, "turn 2 has an image attachment");
  for (const a of attachments) {
    const blob = await client.blob(a);
    assert.ok(blob instanceof Blob);
    assert.equal(blob.size, a.size);
    assert.equal(blob.type, a.mediaType);
    const sum = createHash("sha256").update(Buffer.from(await blob.arrayBuffer())).digest("hex");
    assert.equal(sum, a.sha256);
  }
  await assert.rejects(client.blob("/v1/blobs/" + "0".repeat(64)), (err) => {
    assert.ok(err instanceof ProtocolFailure);
    assert.equal(err.code, "not_found");
    return true;
  });
  await assert.rejects(client.blob("http://example.com/v1/blobs/" + "0".repeat(64)), /not on the proxy/);
});

test("a wrong token fails connect; close() rejects what waits and is idempotent", { timeout: 60_000 }, async (t) => {
  const { url, token } = await startProxy(t);
  await assert.rejects(connect(url, "x".repeat(20), { WebSocket }), (err) => {
    assert.ok(err instanceof ConnectionClosedError);
    assert.match(err.message, /401/);
    assert.doesNotMatch(err.message, /x{20}/, "the token is not in the message");
    return true;
  });
  assert.throws(() => new CcproxyClient(url, "short", { WebSocket }), /16 to 512/);
  // A WebSocket implementation's error that quotes the subprotocols does not leak the token.
  class Throwing {
    constructor(_url, protocols) {
      throw new Error(`bad subprotocols ${protocols.join(", ")}`);
    }
  }
  await assert.rejects(connect(url, token, { WebSocket: Throwing }), (err) => {
    assert.ok(!err.message.includes(token), err.message);
    assert.match(err.message, /bad subprotocols ccproxy\.v1, ccproxy\.token\.<token>/);
    return true;
  });

  const client = await connect(url, token, { WebSocket });
  assert.equal(client.hello.protocol, "1");
  assert.ok(client.hello.capabilities.includes("sessions"));
  const pending = client.request("session/list", {});
  client.close();
  client.close();
  await assert.rejects(pending, ConnectionClosedError);
  await assert.rejects(client.request("session/list", {}), ConnectionClosedError);
});
