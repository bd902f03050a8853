// Copy buttons: on code blocks, messages and tool output. Each is a real
// <button> (reachable with Tab, pressed with Enter or Space) that copies
// its text and says "Copied" for a moment (data-state="copied"), or
// "Copy failed" when the browser refused. What it says is drawn by the
// style sheet and named by aria-label, so that the text of a message (its
// textContent, a selection) holds no "Copy". navigator.clipboard needs a
// secure context (https or localhost) and the page's focus; elsewhere, or
// when it is refused, the text is copied through a hidden textarea and
// document.execCommand("copy").

import { el } from "./dom.js";

// How long the button says "Copied".
const SHOWN_MS = 1500;

// copyText puts text on the clipboard; it resolves to whether it did.
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // refused (no permission, no focus): try the old way
    }
  }
  const ta = el("textarea", "copy-buffer");
  ta.value = text;
  ta.setAttribute("readonly", "");
  ta.setAttribute("aria-hidden", "true");
  const focused = document.activeElement;
  document.body.append(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  ta.remove();
  if (focused && focused.focus) focused.focus();
  return ok;
}

// copyButton returns a button that copies what text() returns; label
// names what it copies, for screen readers and the tooltip ("code",
// "message", "output").
export function copyButton(text, label) {
  const b = el("button", "copy");
  b.type = "button";
  b.title = `Copy the ${label}`;
  b.setAttribute("aria-label", `Copy the ${label}`);
  b.addEventListener("click", async (e) => {
    e.preventDefault();
    e.stopPropagation(); // not the <summary> of a tool card
    const ok = await copyText(text());
    b.dataset.state = ok ? "copied" : "failed";
    b.setAttribute("aria-label", ok ? "Copied" : "Copy failed");
    clearTimeout(b.timer);
    b.timer = setTimeout(() => {
      delete b.dataset.state;
      b.setAttribute("aria-label", `Copy the ${label}`);
    }, SHOWN_MS);
  });
  return b;
}

// addCodeCopy gives every code block of a rendered Markdown box a copy
// button (once), which copies the code as written.
export function addCodeCopy(box) {
  for (const pre of box.querySelectorAll("pre")) {
    if (pre.parentElement && pre.parentElement.classList.contains("code-wrap")) continue;
    const code = pre.querySelector("code") || pre;
    const wrap = el("div", "code-wrap");
    pre.replaceWith(wrap);
    wrap.append(pre, copyButton(() => code.textContent.replace(/\n$/, ""), "code"));
  }
}
