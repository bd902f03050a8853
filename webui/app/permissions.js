// Permission requests: a queue of pending permission/request pushes, shown
// one at a time in the #permission dialog, answered with
// permission/respond. The dialog says what will happen: the command of
// Bash, a line diff of Edit, MultiEdit and Write, the questions of
// AskUserQuestion (options, and a free answer), the plan of ExitPlanMode;
// other tools show their input as JSON. Deny (Keep planning) may carry a
// message to Claude. Also the permission mode switches, the composer's and
// the dialog's (session/setPermissionMode). Everything a request carries is
// put into the page as text, never as HTML. Diffs are bounded: at most
// maxDiffLines lines shown, line matching only up to maxDiffCells.

import { $, el } from "./dom.js";
import { state, queuePermission, dropPermission, showNextPermission, takeShownPermission, setPermissionMode } from "./store.js";

// The queue, the request shown and the modes are the store's
// (state.permissions); the session the composer shows is state.current.
const perms = state.permissions;
const deps = {}; // {conn, notice(session, text, isError), name(session)}

// initPermissions gives the module the connection to answer on and how to
// report an error in a session's log.
export function initPermissions(d) {
  Object.assign(deps, d);
  $("#perm-mode").addEventListener("change", (e) => setMode(state.current, e.target));
  $("#permission .perm-mode").addEventListener("change", (e) => setMode(perms.shown && perms.shown.session, e.target));
}

// setMode asks claude to switch session to the mode sel shows
// (session/setPermissionMode); the switches then show the mode in force.
async function setMode(session, sel) {
  if (!session) return;
  sel.disabled = true;
  try {
    const r = await deps.conn.request("session/setPermissionMode", { session, mode: sel.value });
    setPermissionMode(session, r.mode);
  } catch (err) {
    deps.notice(session, `permission mode not changed: ${err.message}`, true);
  }
  sel.disabled = false;
  showPermissionMode(session, null);
}

// showModeIn sets a mode switch to mode.
function showModeIn(sel, mode) {
  sel.querySelector('option[value="bypassPermissions"]').hidden = mode !== "bypassPermissions";
  sel.value = mode;
}

// showPermissionMode records a session's mode (from session/list or
// session/state; mode may be empty) and updates the switch if the
// composer shows that session (session null: none is shown).
export function showPermissionMode(session, mode, live = true) {
  if (session && mode) setPermissionMode(session, mode);
  const shown = perms.shown;
  if (shown && shown.session === session) showModeIn($("#permission .perm-mode"), perms.modes.get(session) || "default");
  const cur = state.current;
  if (session !== cur && session !== null) return;
  const sel = $("#perm-mode");
  showModeIn(sel, (cur && perms.modes.get(cur)) || "default");
  sel.disabled = !cur || !live;
}

// permissionRequested queues a permission/request push (once per
// session and request id: a resubscribe sends pending ones again). It
// returns whether the request is new.
export function permissionRequested(d) {
  const fresh = queuePermission(d);
  showPermission();
  return fresh;
}

// describe returns a one-line summary of what a request would do, for a
// notification.
export function describe(p) {
  const i = p.input || {};
  if (p.kind === "question") return (p.questions && p.questions[0] && p.questions[0].question) || "Claude has a question";
  if (p.kind === "plan") return "Claude has a plan to approve";
  if (p.toolName === "Bash" && typeof i.command === "string") return `Run: ${i.command}`;
  if (["Edit", "MultiEdit", "Write"].includes(p.toolName) && typeof i.file_path === "string") return `${p.toolName === "Write" ? "Write" : "Edit"} ${i.file_path}`;
  return `Use ${p.mcp ? `${p.mcp.server} · ${p.mcp.tool}` : p.displayName || p.toolName}`;
}

// permissionResolved drops a request that was answered (here or
// elsewhere), timed out or was cancelled, closing the dialog if it shows it.
export function permissionResolved({ session, requestId }) {
  if (dropPermission(session, requestId)) $("#permission").close();
  showPermission();
}

function showPermission() {
  const p = showNextPermission();
  if (!p) return;
  const dlg = $("#permission");
  // kind: tool (allow, always allow, deny), question (AskUserQuestion:
  // pick options, answer), plan (ExitPlanMode: approve, keep planning).
  const kind = p.kind || "tool";
  const questions = kind === "question" ? p.questions || [] : [];
  dlg.querySelector(".perm-title").textContent = { question: "Answer", plan: "Approve the plan of" }[kind] || "Allow";
  dlg.querySelector(".perm-tool").textContent = p.mcp ? `${p.mcp.server} · ${p.mcp.tool}` : p.displayName || p.toolName;
  // The session by the name the sidebar gives it; its id stays in the
  // title for whoever needs it.
  const ps = dlg.querySelector(".perm-session");
  ps.textContent = deps.name ? `in ${deps.name(p.session)}` : "";
  ps.title = p.session;
  const box = dlg.querySelector(".perm-questions");
  box.replaceChildren();
  questions.forEach((q, i) => {
    const fs = el("fieldset", "perm-question");
    fs.append(el("legend", "", q.header ? `${q.header}: ${q.question}` : q.question));
    for (const o of q.options) {
      const label = el("label");
      const input = el("input");
      input.type = q.multiSelect ? "checkbox" : "radio";
      input.name = `q${i}`;
      input.value = o.label;
      label.append(input, el("span", "", ` ${o.label}`));
      if (o.description) label.append(el("small", "", ` — ${o.description}`));
      fs.append(label);
    }
    // A free answer, as the CLI offers ("Other"): instead of the option
    // picked, or besides those ticked for a multiSelect question.
    const other = el("label", "perm-other", "Other: ");
    const text = el("input");
    text.type = "text";
    text.name = `q${i}-other`;
    text.maxLength = 2000;
    text.setAttribute("aria-label", `other answer to: ${q.question}`);
    other.append(text);
    fs.append(other);
    box.append(fs);
  });
  const detail = dlg.querySelector(".perm-detail");
  detail.replaceChildren(...(kind === "tool" ? toolDetail(p.toolName, p.input || {}) : []));
  const pre = dlg.querySelector(".perm-input");
  pre.hidden = kind === "question" || detail.childNodes.length > 0;
  pre.textContent = kind === "plan" && p.plan ? p.plan : JSON.stringify(p.input, null, 2);
  dlg.querySelector(".always").hidden = kind !== "tool";
  const rules = kind === "tool" ? alwaysRules(p) : [];
  const note = dlg.querySelector(".perm-always-note");
  note.hidden = !rules.length;
  note.textContent = rules.length ? `Always allow adds ${rules.join(", ")} to this project's allowed tools (.claude/settings.local.json).` : "";
  dlg.querySelector(".allow").textContent = { question: "Answer", plan: "Approve" }[kind] || "Allow once";
  dlg.querySelector(".perm-mode-row").hidden = kind !== "tool";
  const message = dlg.querySelector(".perm-message");
  message.value = "";
  message.hidden = kind === "question";
  // Short enough to show whole in the dialog at 360 px (TestWebUINothingCut).
  message.placeholder = kind === "plan" ? "What to change (sent with Keep planning)" : "Why, or what instead (sent with Deny)";
  showModeIn(dlg.querySelector(".perm-mode"), perms.modes.get(p.session) || "default");
  dlg.querySelector(".deny").textContent = kind === "plan" ? "Keep planning" : "Deny";
  dlg.returnValue = "";
  // Answered by a button (the form's submit, at once) or Escape (cancel:
  // deny). Not by the close event: the browser may deliver it late (a
  // hidden page), after the dialog shows the next request.
  dlg.querySelector("form").onsubmit = (e) => answer(e.submitter ? e.submitter.value : "deny");
  dlg.oncancel = () => answer("deny");
  const answer = async (rv) => {
    if (!takeShownPermission(p)) return;
    const data = { session: p.session, requestId: p.requestId, behavior: rv === "allow" || rv === "always" ? "allow" : "deny" };
    if (rv === "always") data.always = true;
    if (data.behavior === "deny" && message.value.trim()) data.message = message.value.trim();
    if (data.behavior === "allow" && kind === "question") {
      // The CLI's format: question text -> chosen label(s).
      data.answers = {};
      questions.forEach((q, i) => {
        let picked = [...box.querySelectorAll(`input[name="q${i}"]:checked`)].map((x) => x.value);
        const other = box.querySelector(`input[name="q${i}-other"]`).value.trim();
        if (other) picked = q.multiSelect ? [...picked, other] : [other];
        if (picked.length) data.answers[q.question] = picked.join(", ");
      });
    }
    try {
      await deps.conn.request("permission/respond", data);
    } catch (err) {
      if (err.code === "already_resolved" || err.code === "not_found") {
        permissionResolved(p); // answered elsewhere, timed out or cancelled
        return;
      }
      // Still pending at the proxy (e.g. the connection dropped): ask again.
      deps.notice(p.session, `your answer was not delivered: ${err.message}`, true);
      showPermission();
    }
  };
  dlg.showModal();
  // Focus as before the message field existed: the first option of a
  // question, else Deny (so a reflexive Enter allows nothing).
  const first = kind === "question" ? box.querySelector("input") : dlg.querySelector(".deny");
  if (first) first.focus();
}

// alwaysRules lists the rules "Always allow" would add: the request's
// suggestions that add allow rules, else the tool's name (as the proxy does).
function alwaysRules(p) {
  const out = [];
  for (const s of Array.isArray(p.suggestions) ? p.suggestions : []) {
    if (s && s.type === "addRules" && s.behavior === "allow" && Array.isArray(s.rules)) {
      for (const r of s.rules) if (r && r.toolName) out.push(r.ruleContent ? `${r.toolName}(${r.ruleContent})` : r.toolName);
    }
  }
  if (!out.length && p.toolName) out.push(p.toolName);
  return out;
}

// maxDiffLines bounds the lines a diff shows; maxDiffCells bounds the
// line-diff's table (old lines × new lines): past it, the old text is shown
// removed and the new added, without matching lines.
const maxDiffLines = 400;
const maxDiffCells = 250000;

// toolDetail describes what a built-in tool will do, or returns [] when it
// knows nothing better than the JSON input.
function toolDetail(tool, input) {
  const str = (x) => (typeof x === "string" ? x : "");
  const what = (verb, path, extra) => {
    const d = el("div", "perm-what", `${verb} `);
    d.append(el("span", "path", path));
    if (extra) d.append(document.createTextNode(` ${extra}`));
    return d;
  };
  switch (tool) {
    case "Bash": {
      if (typeof input.command !== "string") return [];
      const out = [el("div", "perm-what", input.run_in_background ? "Run this command in the background:" : "Run this command:")];
      if (input.description) out.push(el("div", "perm-desc", input.description));
      out.push(el("pre", "perm-command", input.command));
      return out;
    }
    case "Edit": {
      if (typeof input.file_path !== "string") return [];
      return [what("Edit", input.file_path, input.replace_all ? "(every occurrence)" : ""), diffView([[str(input.old_string), str(input.new_string)]])];
    }
    case "MultiEdit": {
      if (typeof input.file_path !== "string" || !Array.isArray(input.edits)) return [];
      const n = input.edits.length;
      return [what("Edit", input.file_path, `(${n} change${n === 1 ? "" : "s"})`), diffView(input.edits.map((e) => [str(e && e.old_string), str(e && e.new_string)]))];
    }
    case "Write": {
      if (typeof input.file_path !== "string") return [];
      const content = str(input.content);
      const lines = content === "" ? 0 : content.replace(/\n$/, "").split("\n").length;
      return [what("Write", input.file_path, `(${lines} line${lines === 1 ? "" : "s"}, replacing the file if it exists)`), diffView([["", str(input.content)]])];
    }
    case "NotebookEdit": {
      if (typeof input.notebook_path !== "string") return [];
      return [what(input.edit_mode === "delete" ? "Delete a cell of" : "Edit", input.notebook_path, input.cell_id ? `(cell ${input.cell_id})` : ""), diffView([["", str(input.new_source)]])];
    }
  }
  return [];
}

// diffView shows each [old, new] pair as a line diff: removed lines "- ",
// added "+ ", unchanged "  ", a "@@" line between pairs.
function diffView(pairs) {
  const pre = el("pre", "perm-diff");
  let shown = 0;
  let hidden = 0;
  const line = (cls, mark, text) => {
    if (shown >= maxDiffLines) {
      hidden++;
      return;
    }
    shown++;
    pre.append(el("span", cls, mark + text));
  };
  pairs.forEach(([a, b], i) => {
    if (pairs.length > 1) line("hunk", "", `@@ change ${i + 1} of ${pairs.length} @@`);
    for (const [op, text] of lineDiff(a, b)) line({ "-": "del", "+": "add", " ": "ctx" }[op], `${op} `, text);
  });
  if (hidden) pre.append(el("span", "hunk", `… ${hidden} more line${hidden === 1 ? "" : "s"}`));
  return pre;
}

// lineDiff returns the edit script from a to b by lines, via their longest
// common subsequence: [op, line] with op "-", "+" or " ". An empty text
// has no lines.
function lineDiff(a, b) {
  const lines = (t) => (t === "" ? [] : t.replace(/\n$/, "").split("\n"));
  const x = lines(a);
  const y = lines(b);
  if (x.length * y.length > maxDiffCells) return [...x.map((l) => ["-", l]), ...y.map((l) => ["+", l])];
  // lcs[i][j]: length of the LCS of x[i:] and y[j:], one flat array.
  const w = y.length + 1;
  const lcs = new Uint32Array((x.length + 1) * w);
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) {
      out.push([" ", x[i]]);
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) out.push(["-", x[i++]]);
    else out.push(["+", y[j++]]);
  }
  while (i < x.length) out.push(["-", x[i++]]);
  while (j < y.length) out.push(["+", y[j++]]);
  return out;
}
