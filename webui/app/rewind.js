// "Rewind to here" on a user message of a live session (session/rewind,
// SPEC §3): a first click asks for a dry run and shows, below the message,
// the files claude changed since it; then the user rewinds the
// conversation with the files restored, the conversation only, or cancels.
// The messages from that one on leave the view when the proxy's
// ccproxy/rewound event comes (render.js: rewound), for every client of
// the session. File paths are put into the page as text.

import { el } from "./dom.js";

const deps = {}; // {conn, notice(session, text, isError)}

// initRewind gives the module the connection to ask on.
export function initRewind(d) {
  Object.assign(deps, d);
}

// askRewind shows the rewind panel of the user message uuid (its bubble)
// in live session v.
export async function askRewind(v, uuid, bubble) {
  for (const p of v.log.querySelectorAll(".rewind-panel")) p.remove();
  const panel = el("div", "rewind-panel");
  panel.dataset.to = uuid;
  panel.append(el("p", "", "Looking for the files changed since this message…"));
  bubble.after(panel);
  const cancel = () => panel.remove();
  let dry;
  try {
    dry = await deps.conn.request("session/rewind", { session: v.id, to: uuid, files: true, dryRun: true });
  } catch (err) {
    panel.replaceChildren(el("p", "error", `Cannot rewind: ${err.message}`), actions([["Close", cancel]]));
    return;
  }
  const files = dry.files || [];
  const canFiles = files.length > 0 && !dry.filesError;
  panel.replaceChildren(el("p", "", files.length
    ? `Rewind the conversation to before this message? ${files.length} file${files.length === 1 ? "" : "s"} changed since:`
    : "Rewind the conversation to before this message? No file changed since."));
  if (files.length) {
    const ul = el("ul", "rewind-files");
    for (const f of files) ul.append(el("li", "", f));
    panel.append(ul);
  }
  if (dry.filesError) panel.append(el("p", "notice", `Files cannot be restored: ${dry.filesError}`));
  const go = async (withFiles) => {
    for (const b of panel.querySelectorAll("button")) b.disabled = true;
    try {
      await deps.conn.request("session/rewind", { session: v.id, to: uuid, files: withFiles });
      panel.remove(); // the rewound event drops the messages
    } catch (err) {
      panel.append(el("p", "error", `Not rewound: ${err.message}`));
      for (const b of panel.querySelectorAll("button")) b.disabled = false;
    }
  };
  const choices = [];
  if (canFiles) choices.push(["Rewind and restore files", () => go(true), "rewind-files-go"]);
  choices.push([canFiles ? "Conversation only" : "Rewind", () => go(false), "rewind-go"]);
  choices.push(["Cancel", cancel, "rewind-cancel"]);
  panel.append(actions(choices));
}

function actions(list) {
  const menu = el("div", "rewind-actions");
  for (const [label, fn, cls] of list) {
    const b = el("button", cls || "", label);
    b.type = "button";
    b.onclick = fn;
    menu.append(b);
  }
  return menu;
}
