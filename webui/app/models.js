// The model picker of the composer, beside the permission mode switch:
// the models claude offers (session/state's and the subscribe reply's
// models; an option shows displayName, short, its title the full name and
// the description), the
// session's model selected; picking one asks claude to switch
// (session/setModel), and a refusal is shown in the session's log. It is
// disabled while no live session is shown or the connection is down.
// Everything a model carries is put into the page as text.

import { $, el } from "./dom.js";
import { state, noteModel, setModelsLive } from "./store.js";

// What is known of each session's models, and whether the session shown
// (state.current) takes turns, are the store's (state.models).
const deps = {}; // {conn, notice(session, text, isError)}
// pending: session -> the model a switch under way asks for; while it is
// asked the picker shows it, disabled, whatever session/state says.
const pending = new Map();

// initModels gives the module the connection to ask on and how to report
// an error in a session's log.
export function initModels(d) {
  Object.assign(deps, d);
  $("#model-pick").addEventListener("change", (e) => setModel(state.current, e.target));
}

// setModel asks claude to switch session to the model sel shows; the
// picker then shows the model in force.
async function setModel(session, sel) {
  if (!session || !sel.value || pending.has(session)) return;
  const model = sel.value;
  pending.set(session, model);
  render(state.current);
  try {
    const r = await deps.conn.request("session/setModel", { session, model });
    pending.delete(session);
    showModel(session, r.model);
  } catch (err) {
    pending.delete(session);
    deps.notice(session, `model not changed: ${err.message}`, true);
    showModel(session);
  }
}

// showModel records a session's model and models (from session/state or
// the subscribe reply; either may be absent) and updates the picker if
// the composer shows that session (session null: whichever it shows;
// isLive, when given, says whether it takes turns).
export function showModel(session, model, models, isLive) {
  if (session) noteModel(session, model, models);
  const cur = state.current;
  if (session !== cur && session !== null) return;
  if (isLive !== undefined) setModelsLive(isLive);
  render(cur);
}

function render(cur) {
  const sel = $("#model-pick");
  const known = (cur && state.models.known.get(cur)) || { model: "", models: [] };
  const asked = cur ? pending.get(cur) : undefined;
  const k = asked ? { ...known, model: asked } : known;
  const opts = k.models.map((m) => option(m.value, shortName(m.displayName || m.value), [m.displayName, m.description].filter(Boolean).join(" · ")));
  if (k.model && !k.models.some((m) => m.value === k.model)) opts.push(option(k.model, k.model, "")); // a model id claude reports
  if (!k.model) {
    const o = option("", "Model", "");
    o.disabled = true;
    opts.unshift(o);
  }
  sel.replaceChildren(...opts);
  sel.value = k.model;
  const m = k.models.find((x) => x.value === k.model);
  sel.title = m ? `Model: ${m.displayName || m.value}${m.description ? ` (${m.description})` : ""}` : "Model of this session";
  sel.disabled = asked !== undefined || !cur || !state.models.live || document.body.dataset.conn !== "open" || opts.length < 2 && !k.model;
}

// shortName is what the picker shows of a model's name: without a closing
// remark in parentheses ("Default (recommended)" shows "Default"), so the
// small picker never cuts it; the full name is in the option's and the
// picker's title.
function shortName(name) {
  return name.replace(/\s*\([^()]*\)$/, "") || name;
}

function option(value, text, title) {
  const o = el("option", "", text);
  o.value = value;
  if (title) o.title = title;
  return o;
}
