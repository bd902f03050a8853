// Full-text search of past sessions (history/search) from the History
// panel's search box: while the box filters the listed sessions by title,
// the conversations of every project are searched too (after a pause in
// typing), and the sessions found are listed under "In conversations",
// newest first, each with its snippets, the words found marked (<mark>,
// from the reply's UTF-16 highlight offsets: JavaScript string indices).
// Snippets go into the page as text, never as HTML.

import { $, el } from "./dom.js";

export function setupHistorySearch({ request, has, open }) {
  const input = $("#history-search");
  const box = $("#history-results");
  const list = $("#history-results-list");
  const status = $("#history-results-status");
  let timer = 0;
  let seq = 0; // the newest search: replies to older ones are dropped
  input.addEventListener("input", () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (!q || !has("history.search") || !/[\p{L}\p{N}]/u.test(q)) {
      seq++;
      box.hidden = true;
      list.replaceChildren();
      return;
    }
    timer = setTimeout(() => run(q), 250);
  });

  async function run(q) {
    const mine = ++seq;
    box.hidden = false;
    status.hidden = false;
    status.textContent = "Searching…";
    try {
      const r = await request("history/search", { query: q, limit: 20 });
      if (mine !== seq) return;
      list.replaceChildren(...r.hits.map(hitItem));
      status.hidden = r.hits.length > 0 && !r.more;
      status.textContent = r.hits.length === 0 ? `No conversation mentions “${q}”.` : r.more ? "More sessions match: add a word to narrow it." : "";
    } catch (err) {
      if (mine !== seq) return;
      list.replaceChildren();
      status.textContent = `Search unavailable: ${err.message}`;
    }
  }

  function hitItem(h) {
    const li = el("li");
    li.dataset.history = h.id;
    li.title = h.title || h.id;
    const when = new Date(h.updated);
    const project = (h.project || "").split(/[\\/]/).filter(Boolean).pop() || "";
    li.append(el("span", "title", h.title || "(untitled)"),
      el("span", "meta", `${isNaN(when) ? "" : when.toLocaleString()}${project ? " · " + project : ""}`));
    for (const m of h.matches) li.append(snippet(m));
    li.onclick = () => open({ id: h.id, title: h.title, updated: h.updated, project: h.project });
    return li;
  }

  function snippet(m) {
    const p = el("span", "snippet");
    p.dataset.role = m.role;
    const who = { user: "You", assistant: "Claude", tool: "Tool" }[m.role] || m.role;
    p.append(el("span", "who", `${who}: `));
    let at = 0;
    for (const { start, end } of m.highlights) {
      if (start < at || end > m.snippet.length) continue;
      if (start > at) p.append(document.createTextNode(m.snippet.slice(at, start)));
      p.append(el("mark", "", m.snippet.slice(start, end)));
      at = end;
    }
    p.append(document.createTextNode(m.snippet.slice(at)));
    return p;
  }
}
