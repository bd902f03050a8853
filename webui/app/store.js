// The web app's state, in one place. Modules read it from `state` and change
// it only through the functions below; a change the page shows at once
// notifies the subscribers of its topic (on(topic, fn)), which re-render.
// No framework: one plain object, notifications delivered synchronously in
// the order the subscribers subscribed.
//
// What it holds, who changes it (through what), who re-renders:
//   capabilities  hello's capabilities          app.js's hello: setCapabilities
//                                               -> "capabilities": app.js (history), mcp.js (+ MCP server)
//   sessions      live session id -> view (app.js's newView)
//                                               app.js: liveView, updateSession, setPrompt, markSubscribed,
//                                               advanceSeq, closeMissing; render.js: setInfo (system init)
//                                               -> "sessions" (id or null): app.js renders the list, and the
//                                               composer when id is the session shown
//   current       the live session shown, or null
//   shownPast     the Claude session id of the past session shown, or null
//                                               app.js: showLive, showPast -> "shown": app.js marks the history,
//                                               renders the list and the composer
//   past          Claude session id -> view of a past session; historyNext: the cursor of history/list's
//                 next page; loginChecks: the number of the latest login check
//                                               app.js: pastView, setHistoryNext, nextLoginCheck
//   permissions   queue (permission/request data, in arrival order), shown (the request the dialog
//                 shows), modes (session -> permission mode as last reported)
//                                               permissions.js: queuePermission, dropPermission,
//                                               showNextPermission, takeShownPermission, setPermissionMode
//   models        known (session -> {model, models} as last reported), live (the session shown takes turns)
//                                               models.js: noteModel, setModelsLive
//   notifications tag -> the browser Notification shown and not closed yet
//                                               notify.js: addNotification, dropNotification
//   follow        stick, top, observed: the conversation's scrolling follows its bottom
//                                               render.js: setFollow
//   mcp           servers (the last mcp/status), config (name -> entry of the last mcp/config),
//                 project (mcp/config's), logins (name -> the last mcp/login state)
//                                               mcp.js's pushes: setMCPStatus, setMCPConfig -> "mcp": the strip
//                                               (mcp-strip.js) and the panel; setLogin (also mcp-access.js's
//                                               sign-in) -> "panel"
//   panel         the server panel: name (shown), probe, probing, failureProbed, tools, toolsFor,
//                 message, trustAsked       mcp-panel.js: openPanel, closePanel, panelSay, probeStarted,
//                                               probeDone, patchPanel (bookkeeping while it renders, no
//                                               notification); mcp-access.js: setTrustAsked, panelSay;
//                                               mcp-form.js: panelSay -> "panel": the panel (mcp-panel.js)
//   form          the MCP form's mode: {mode: "add"} or {mode: "edit", entry}
//                                               mcp-form.js: setFormMode
//   composer      limits (hello's: maxImageBytes, maxFrameBytes), images (the next turn's:
//                 {name, mediaType, data, size, url}), commands (session -> [{name, description,
//                 hint, kind}]: its slash commands and skills)
//                                               composer.js: setComposerLimits, addImage, removeImage,
//                                               clearImages; render.js: setCommands (system events);
//                                               composer.js renders what it changes
//
// A view's own rendering bookkeeping (log, msgs, streaming, tools,
// pendingTurns, past, next, loading, moreButton) belongs to the renderer of
// that view (render.js, app.js's history), not to the store.

export const state = {
  capabilities: [],
  sessions: new Map(),
  current: null,
  shownPast: null,
  past: new Map(),
  historyNext: "",
  loginChecks: 0,
  permissions: { queue: [], shown: null, modes: new Map() },
  models: { known: new Map(), live: false },
  notifications: new Map(),
  follow: { stick: true, top: 0, observed: null },
  mcp: { servers: [], config: new Map(), project: "", logins: new Map() },
  panel: { name: null, probe: null, probing: false, failureProbed: false, tools: null, toolsFor: "", message: null, trustAsked: false },
  form: { mode: "add" },
  composer: { limits: {}, images: [], commands: new Map() },
};

// ---- subscriptions ----

const subscribers = new Map(); // topic -> [fn]

// on calls fn(detail) after every change of topic.
export function on(topic, fn) {
  if (!subscribers.has(topic)) subscribers.set(topic, []);
  subscribers.get(topic).push(fn);
}

function emit(topic, detail) {
  for (const fn of subscribers.get(topic) || []) fn(detail);
}

// ---- capabilities ----

export function setCapabilities(list) {
  state.capabilities = list || [];
  emit("capabilities");
}

// has reports whether the proxy offers capability cap.
export const has = (cap) => state.capabilities.includes(cap);

// ---- live sessions ----

// liveView returns the view of live session id, made by make(id) the
// first time.
export function liveView(id, make) {
  let v = state.sessions.get(id);
  if (!v) {
    v = make(id);
    state.sessions.set(id, v);
  }
  return v;
}

// updateSession records a session's state and what else is known of it
// (both optional).
export function updateSession(v, st, info) {
  if (st) v.state = st;
  if (info) Object.assign(v.info, info);
  emit("sessions", v.id);
}

// setInfo records what a session's claude reported of itself (model, cwd).
export function setInfo(v, info) {
  Object.assign(v.info, info);
  emit("sessions", null);
}

// setPrompt records a session's first prompt, which names it in the list
// (shown at once unless quiet); an empty text changes nothing.
export function setPrompt(v, text, quiet) {
  if (v.info.prompt || !text) return;
  v.info.prompt = text;
  if (!quiet) emit("sessions", null);
}

export function markSubscribed(v) {
  v.subscribed = true;
}

// advanceSeq records event seq of v; false if it was seen already (a replay
// after a reconnect).
export function advanceSeq(v, seq) {
  if (seq <= v.lastSeq) return false;
  v.lastSeq = seq;
  return true;
}

// closeMissing marks the sessions the proxy no longer lists (ids) closed
// and returns the others.
export function closeMissing(ids) {
  const kept = [];
  for (const v of state.sessions.values()) {
    if (ids.includes(v.id)) kept.push(v);
    else v.state = "closed";
  }
  emit("sessions", null);
  return kept;
}

// ---- what is shown ----

export function showLive(id) {
  state.current = id;
  state.shownPast = null;
  emit("shown");
}

export function showPast(id) {
  state.current = null;
  state.shownPast = id;
  emit("shown");
}

// ---- history ----

// pastView returns the view of past session s and whether it was made now
// (by make()).
export function pastView(s, make) {
  let v = state.past.get(s.id);
  if (v) return [v, false];
  v = make();
  state.past.set(s.id, v);
  return [v, true];
}

export function setHistoryNext(cursor) {
  state.historyNext = cursor || "";
}

// nextLoginCheck numbers a login check; the latest is state.loginChecks.
export function nextLoginCheck() {
  return ++state.loginChecks;
}

// ---- permissions ----

// queuePermission queues a permission/request (once per session and
// request id) and reports whether it is new.
export function queuePermission(d) {
  const q = state.permissions.queue;
  const fresh = !q.some((p) => p.session === d.session && p.requestId === d.requestId);
  if (fresh) q.push(d);
  return fresh;
}

// dropPermission drops a request from the queue, and from the dialog; it
// reports whether the dialog showed it.
export function dropPermission(session, requestId) {
  const p = state.permissions;
  const i = p.queue.findIndex((x) => x.session === session && x.requestId === requestId);
  if (i >= 0) p.queue.splice(i, 1);
  if (p.shown && p.shown.session === session && p.shown.requestId === requestId) {
    p.shown = null;
    return true;
  }
  return false;
}

// showNextPermission returns the request the dialog is to show next, or
// null when it shows one already or none waits.
export function showNextPermission() {
  const p = state.permissions;
  if (p.shown || !p.queue.length) return null;
  p.shown = p.queue[0];
  return p.shown;
}

// takeShownPermission takes request r off the dialog; false if the dialog
// no longer shows it.
export function takeShownPermission(r) {
  if (state.permissions.shown !== r) return false;
  state.permissions.shown = null;
  return true;
}

export function setPermissionMode(session, mode) {
  state.permissions.modes.set(session, mode);
}

// ---- models ----

// noteModel records a session's model and models (either may be absent).
export function noteModel(session, model, models) {
  const k = state.models.known.get(session) || { model: "", models: [] };
  if (model) k.model = model;
  if (Array.isArray(models)) k.models = models;
  state.models.known.set(session, k);
}

export function setModelsLive(live) {
  state.models.live = live;
}

// ---- notifications ----

export function addNotification(tag, n) {
  state.notifications.set(tag, n);
}

// dropNotification forgets tag's notification (only if it is n, when n is
// given).
export function dropNotification(tag, n) {
  if (n === undefined || state.notifications.get(tag) === n) state.notifications.delete(tag);
}

// ---- scrolling ----

export function setFollow(patch) {
  Object.assign(state.follow, patch);
}

// ---- MCP ----

export function setMCPStatus(servers) {
  state.mcp.servers = servers || [];
  emit("mcp");
}

export function setMCPConfig(d) {
  state.mcp.config.clear();
  for (const s of d.servers || []) state.mcp.config.set(s.name, s);
  state.mcp.project = d.project || "";
  emit("mcp");
}

// setLogin records the state of a server's sign-in (mcp/login).
export function setLogin(name, l) {
  state.mcp.logins.set(name, l);
  emit("panel");
}

// openPanel shows server name's panel; what was fetched for another server
// is dropped.
export function openPanel(name) {
  const p = state.panel;
  if (p.name !== name) Object.assign(p, { name, probe: null, failureProbed: false, tools: null, toolsFor: "", message: null, trustAsked: false });
  emit("panel");
}

export function closePanel() {
  state.panel.name = null;
}

// panelSay shows the result of the panel's last action.
export function panelSay(text, error) {
  state.panel.message = { text, error: !!error };
  emit("panel");
}

export function setTrustAsked(asked) {
  state.panel.trustAsked = asked;
  emit("panel");
}

export function probeStarted() {
  state.panel.probing = true;
  emit("panel");
}

// probeDone ends a probe of server name: its result (and message) count if
// the panel still shows that server.
export function probeDone(name, result) {
  const p = state.panel;
  p.probing = false;
  if (p.name !== name) return;
  Object.assign(p, result);
  emit("panel");
}

// patchPanel is the panel's bookkeeping while it renders (what was probed
// and listed); it notifies no one.
export function patchPanel(patch) {
  Object.assign(state.panel, patch);
}

export function setFormMode(mode) {
  state.form = mode;
}

// ---- the composer ----

export function setComposerLimits(l) {
  state.composer.limits = l;
}

export function addImage(img) {
  state.composer.images.push(img);
}

export function removeImage(img) {
  state.composer.images = state.composer.images.filter((i) => i !== img);
}

export function clearImages() {
  state.composer.images = [];
}

// setCommands records session's slash commands and skills ([{name,
// description?, hint?, kind: "command" | "skill"}]); rich: the list has
// descriptions (system/commands_changed), which a list of names alone
// (system/init) does not replace.
export function setCommands(session, list, rich) {
  const had = state.composer.commands.get(session);
  if (had && had.rich && !rich) return;
  list.rich = !!rich;
  state.composer.commands.set(session, list);
}
