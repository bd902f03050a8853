// Permission requests: a queue of pending permission/request pushes, shown
// one at a time in the #permission dialog, answered with
// permission/respond. Everything a request carries (tool input, questions,
// plan) is put into the page as text, never as HTML.

const $ = (sel) => document.querySelector(sel);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const pending = []; // permission/request data, in arrival order
let shown = null; // the request the dialog shows
let deps = null; // {conn, notice(session, text, isError)}

// initPermissions gives the module the connection to answer on and how to
// report an error in a session's log.
export function initPermissions(d) {
  deps = d;
}

// permissionRequested queues a permission/request push (once per
// session and request id: a resubscribe sends pending ones again).
export function permissionRequested(d) {
  if (!pending.some((p) => p.session === d.session && p.requestId === d.requestId)) pending.push(d);
  showPermission();
}

// permissionResolved drops a request that was answered (here or
// elsewhere), timed out or was cancelled, closing the dialog if it shows it.
export function permissionResolved({ session, requestId }) {
  const i = pending.findIndex((p) => p.session === session && p.requestId === requestId);
  if (i >= 0) pending.splice(i, 1);
  if (shown && shown.session === session && shown.requestId === requestId) {
    shown = null;
    $("#permission").close();
  }
  showPermission();
}

function showPermission() {
  if (shown || !pending.length) return;
  const p = pending[0];
  shown = p;
  const dlg = $("#permission");
  // kind: tool (allow, always allow, deny), question (AskUserQuestion:
  // pick options, answer), plan (ExitPlanMode: approve, keep planning).
  const kind = p.kind || "tool";
  const questions = kind === "question" ? p.questions || [] : [];
  dlg.querySelector(".perm-title").textContent = { question: "Answer", plan: "Approve the plan of" }[kind] || "Allow";
  dlg.querySelector(".perm-tool").textContent = p.mcp ? `${p.mcp.server} · ${p.mcp.tool}` : p.displayName || p.toolName;
  dlg.querySelector(".perm-session").textContent = `session ${p.session}`;
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
    box.append(fs);
  });
  const pre = dlg.querySelector(".perm-input");
  pre.hidden = kind === "question";
  pre.textContent = kind === "plan" && p.plan ? p.plan : JSON.stringify(p.input, null, 2);
  dlg.querySelector(".always").hidden = kind !== "tool";
  dlg.querySelector(".allow").textContent = { question: "Answer", plan: "Approve" }[kind] || "Allow";
  dlg.querySelector(".deny").textContent = kind === "plan" ? "Keep planning" : "Deny";
  dlg.returnValue = "";
  dlg.onclose = async () => {
    if (shown !== p) return;
    shown = null;
    const rv = dlg.returnValue;
    const data = { session: p.session, requestId: p.requestId, behavior: rv === "allow" || rv === "always" ? "allow" : "deny" };
    if (rv === "always") data.always = true;
    if (data.behavior === "allow" && kind === "question") {
      // The CLI's format: question text -> chosen label(s).
      data.answers = {};
      questions.forEach((q, i) => {
        const picked = [...box.querySelectorAll(`input[name="q${i}"]:checked`)].map((x) => x.value);
        if (picked.length) data.answers[q.question] = picked.join(", ");
      });
    }
    try {
      await deps.conn.request("permission/respond", data);
    } catch (err) {
      if (err.code !== "already_resolved") deps.notice(p.session, err.message, true);
    }
  };
  dlg.showModal();
}
