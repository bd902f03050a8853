// Connection to ccproxy: one websocket, requests matched to replies by id,
// pushes dispatched by type, and automatic reconnection with backoff. The
// page is authenticated by the HttpOnly cookie set by /v1/login, so no token
// is handled here.

import { api } from "./dom.js";

export const SUBPROTOCOL = "ccproxy.v1";

export class Connection {
  constructor(url, { onOpen, onPush, onStatus }) {
    this.url = url;
    this.onOpen = onOpen;
    this.onPush = onPush;
    this.onStatus = onStatus;
    this.nextId = 1;
    this.pending = new Map();
    this.backoff = 250;
    this.ws = null;
    this.closedByUs = false;
  }

  connect() {
    if (this.closedByUs) return;
    this.onStatus("connecting");
    const ws = new WebSocket(this.url, [SUBPROTOCOL]);
    this.ws = ws;
    ws.onopen = () => {
      this.backoff = 250;
      this.onStatus("open");
      this.onOpen();
    };
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      for (const { reject } of this.pending.values()) reject(new Error("connection closed"));
      this.pending.clear();
      if (this.closedByUs) return;
      this.onStatus("closed", ev.code, ev.reason);
      const wait = this.backoff;
      this.backoff = Math.min(this.backoff * 2, 5000);
      setTimeout(() => this.connect(), wait);
    };
  }

  close() {
    this.closedByUs = true;
    if (this.ws) this.ws.close(1000);
  }

  request(type, data = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(Object.assign(new Error("not connected"), { unsent: true }));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ type, id, data }));
    });
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame.type === "reply") {
      const waiter = this.pending.get(frame.id);
      if (!waiter) return;
      this.pending.delete(frame.id);
      if (frame.ok) waiter.resolve(frame.data);
      else waiter.reject(Object.assign(new Error(frame.error.message), { code: frame.error.code, details: frame.error.details }));
      return;
    }
    this.onPush(frame.type, frame.data || {});
  }
}

// loginCode returns the one-time login code of the URL's fragment
// (#code=…), or "".
export function loginCode() {
  const m = /(?:^#|&)code=([A-Za-z0-9._~-]+)/.exec(location.hash);
  return m ? m[1] : "";
}

// login exchanges a one-time code from the URL fragment (#code=…) for the
// session cookie, then removes the fragment from the address bar and the
// history entry. Fragments are never sent to servers, so the code does not
// end up in any log.
export async function login() {
  const code = loginCode();
  if (!code) return;
  history.replaceState(null, "", location.pathname + location.search);
  const r = await fetch(api("/v1/login"), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify({ code }),
  });
  if (!r.ok) {
    let msg = `login failed (${r.status})`;
    try {
      msg = (await r.json()).error.message;
    } catch {}
    throw Object.assign(new Error(msg), { status: r.status });
  }
}
