// Browser notifications: when a permission request waits or a turn ends
// while the page is hidden (another tab, a minimized window, a locked
// phone). Only after the user allowed them: the "Notify me" button asks
// (browsers require a click for that). A notification is closed when the
// page becomes visible again or its permission request was answered; at
// most one per tag is open, so the map below stays small.

import { $ } from "./dom.js";
import { state, addNotification, dropNotification } from "./store.js";

const open = state.notifications; // tag -> Notification shown and not closed yet; changed through the store

function supported() {
  return "Notification" in window;
}

function updateButton() {
  $("#notify-enable").hidden = !supported() || Notification.permission !== "default";
}

export function initNotify() {
  updateButton();
  $("#notify-enable").addEventListener("click", async () => {
    try {
      await Notification.requestPermission();
    } finally {
      updateButton();
    }
  });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) for (const n of [...open.values()]) n.close();
  });
}

// notify shows a notification if the page is hidden and the user allowed
// them. A click brings the page forward and calls onclick.
export function notify(tag, title, body, onclick) {
  if (!document.hidden || !supported() || Notification.permission !== "granted") return;
  let n;
  try {
    n = new Notification(title, { body: body.length > 180 ? body.slice(0, 179) + "…" : body, tag });
  } catch {
    return; // e.g. Android Chrome allows them only from a service worker
  }
  const prev = open.get(tag);
  if (prev) prev.close();
  addNotification(tag, n);
  n.onclose = () => dropNotification(tag, n);
  n.onclick = () => {
    window.focus();
    n.close();
    if (onclick) onclick();
  };
}

// unnotify closes the notification of tag, if one is open.
export function unnotify(tag) {
  const n = open.get(tag);
  if (n) n.close();
  dropNotification(tag);
}
