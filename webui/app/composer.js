// The composer around the message box: images (pasted, dropped or
// attached; checked against the types and the size the proxy takes,
// shown as removable thumbnails, sent with the turn as session/send
// images), a menu of the session's slash commands and skills when the
// box starts with "/", a menu of the session's files after "@"
// (session/files), a box that grows with its text up to 40% of the
// window, Esc to interrupt a running turn, and "?" for the list of
// shortcuts. app.js sends the turn (takeImages) and owns Enter.
//
// Where the commands come from: render.js records what the event feed
// says (system/commands_changed: names, descriptions and argument hints;
// else system/init's slash_commands and skills, names only) with the
// store's setCommands; any other source (a protocol field, say) can do
// the same.

import { $, el } from "./dom.js";
import { state, has, addImage, removeImage, clearImages, setComposerLimits } from "./store.js";
import { formatSize } from "./format.js";

// The image types claude takes (SPEC session/send), and the default
// size limit when hello announces none (stream.MaxImageBytes).
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const DEFAULT_MAX_IMAGE = 5 << 20;
const MAX_IMAGES = 20; // images per turn
const MENU_ITEMS = 50; // items a menu shows
const FILES_LIMIT = 30; // paths asked of session/files
const GROW_MAX = 0.4; // the box grows to this share of the window's height

// hooks: request(type, data), notice(text, isError)
let hooks = { request: () => Promise.reject(new Error("not connected")) };

// limits returns what one image may weigh and what one frame may carry.
function limits() {
  const l = state.composer.limits;
  return { image: l.maxImageBytes || DEFAULT_MAX_IMAGE, frame: l.maxFrameBytes || 16 << 20 };
}

// imageNote says which images the composer takes, for the attach
// button's tooltip, the strip of thumbnails and the drop zone.
export function imageNote() {
  return `PNG, JPEG, GIF or WebP, up to ${formatSize(limits().image)} each`;
}

export function initComposer(h) {
  hooks = { ...hooks, ...h };
  const ta = $("#composer textarea");
  ta.addEventListener("input", () => {
    grow();
    updateMenu();
    const note = $("#attachments .mention-note");
    if (note) note.hidden = !/(^|\s)@\S/.test(ta.value);
  });
  ta.addEventListener("click", updateMenu);
  ta.addEventListener("blur", () => setTimeout(() => {
    if (!$("#composer").contains(document.activeElement)) closeMenu();
  }, 0));
  // Before app.js's Enter (a listener on the textarea): the menus' keys.
  $("#composer").addEventListener("keydown", menuKeys, true);
  // In the capture phase: before the menus' keys and layout.js's Esc
  // (which closes the sidebar), so each sees the state the key found.
  document.addEventListener("keydown", globalKeys, true);
  window.addEventListener("resize", grow);

  // Images: paste, drop, attach.
  ta.addEventListener("paste", (e) => {
    const files = [...(e.clipboardData ? e.clipboardData.files : [])];
    if (!files.length || !has("images")) return;
    if (!e.clipboardData.getData("text/plain")) e.preventDefault();
    addFiles(files);
  });
  const chat = $("#chat");
  // Files dropped on the chat are never opened by the browser in place of
  // the page; they are taken as images when the proxy takes images.
  const dragging = (e) => e.dataTransfer && [...e.dataTransfer.types].includes("Files");
  chat.addEventListener("dragover", (e) => {
    if (!dragging(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = has("images") ? "copy" : "none";
    if (!has("images")) return;
    $("#composer").dataset.drop = "true";
    $("#composer").dataset.dropNote = `Drop images here (${imageNote()})`;
  });
  chat.addEventListener("dragleave", (e) => {
    if (!chat.contains(e.relatedTarget)) delete $("#composer").dataset.drop;
  });
  chat.addEventListener("drop", (e) => {
    delete $("#composer").dataset.drop;
    if (!dragging(e)) return;
    e.preventDefault();
    if (has("images")) addFiles([...e.dataTransfer.files]);
  });
  const input = $("#attach-input");
  input.accept = IMAGE_TYPES.join(",");
  $("#attach").addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    addFiles([...input.files]);
    input.value = "";
  });
  $("#shortcuts-open").addEventListener("click", openShortcuts);
  $("#shortcuts .close").addEventListener("click", () => $("#shortcuts").close());
  showImages();
  grow();
}

// setLimits takes hello's limits (maxImageBytes, maxFrameBytes).
export function setLimits(l) {
  setComposerLimits(l || {});
  $("#attach").title = `Attach images (${imageNote()})`;
  $("#attach").hidden = !has("images");
  showImages();
}

// ---- the growing box ----

// grow fits the box to its text, up to GROW_MAX of the window; beyond, it
// scrolls.
export function grow() {
  const ta = $("#composer textarea");
  const max = Math.round(window.innerHeight * GROW_MAX);
  ta.style.height = "auto";
  const want = ta.scrollHeight + (ta.offsetHeight - ta.clientHeight);
  ta.style.height = `${Math.min(want, max)}px`;
  ta.style.overflowY = want > max ? "auto" : "hidden";
}

// ---- images ----

// addFiles checks and reads files into the turn's images; what is
// refused is said in the strip.
async function addFiles(files) {
  const { image, frame } = limits();
  const refused = [];
  for (const f of files) {
    const name = f.name || "pasted image";
    if (!IMAGE_TYPES.includes(f.type)) {
      refused.push(`${name}: not a PNG, JPEG, GIF or WebP image`);
      continue;
    }
    if (f.size > image) {
      refused.push(`${name}: ${formatSize(f.size)}, over the limit of ${formatSize(image)}`);
      continue;
    }
    if (state.composer.images.length >= MAX_IMAGES) {
      refused.push(`${name}: at most ${MAX_IMAGES} images per message`);
      continue;
    }
    const data = await readBase64(f);
    const total = state.composer.images.reduce((n, i) => n + i.data.length, 0) + data.length;
    if (total > frame - (64 << 10)) {
      refused.push(`${name}: the images together would be too large for one message`);
      continue;
    }
    addImage({ name, mediaType: f.type, data, size: f.size, url: URL.createObjectURL(f) });
  }
  showImages(refused);
}

function readBase64(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}

// showImages renders the thumbnails, each with a remove button, the note
// on what is taken, and what was refused (refused: messages).
function showImages(refused = []) {
  const strip = $("#attachments");
  strip.replaceChildren();
  for (const img of state.composer.images) {
    const fig = el("figure", "thumb");
    fig.title = `${img.name} (${formatSize(img.size)})`;
    const pic = el("img");
    pic.src = img.url;
    pic.alt = img.name;
    const rm = el("button", "remove", "×");
    rm.type = "button";
    rm.setAttribute("aria-label", `Remove ${img.name}`);
    rm.title = `Remove ${img.name}`;
    rm.addEventListener("click", () => {
      removeImage(img);
      URL.revokeObjectURL(img.url);
      showImages();
      $("#composer textarea").focus();
    });
    fig.append(pic, rm, el("figcaption", "", formatSize(img.size)));
    strip.append(fig);
  }
  if (state.composer.images.length || refused.length) strip.append(el("span", "attach-note", imageNote()));
  if (state.composer.images.length) {
    // Measured (docs/CLI-NOTES.md): the CLI reads @-mentioned files only
    // in a turn of text alone.
    const m = el("span", "attach-note mention-note", "With images, Claude gets @paths as text and reads those files itself if it wants them.");
    m.hidden = !/(^|\s)@\S/.test($("#composer textarea").value);
    strip.append(m);
  }
  for (const r of refused) {
    const p = el("span", "attach-error", r);
    p.setAttribute("role", "alert");
    strip.append(p);
  }
  strip.hidden = !strip.childElementCount;
}

// takeImages returns the turn's images as session/send takes them, with
// a data: URL each for the bubble, and empties the strip.
export function takeImages() {
  const out = state.composer.images.map((i) => ({ mediaType: i.mediaType, data: i.data, src: `data:${i.mediaType};base64,${i.data}`, name: i.name, size: i.size }));
  for (const i of state.composer.images) URL.revokeObjectURL(i.url);
  clearImages();
  showImages();
  return out;
}

// putBack returns images takeImages gave (a turn that was not sent).
export function putBack(images) {
  for (const i of images) {
    const bytes = Uint8Array.from(atob(i.data), (c) => c.charCodeAt(0));
    addImage({ name: i.name, mediaType: i.mediaType, data: i.data, size: i.size, url: URL.createObjectURL(new Blob([bytes], { type: i.mediaType })) });
  }
  showImages();
}

export const hasImages = () => state.composer.images.length > 0;

// ---- the / and @ menus ----

// menu: what the open menu shows: {kind: "/" | "@", start (the index of
// its "/" or "@" in the box), items, active}, or null.
let menu = null;
let filesAsked = 0; // the number of the latest session/files asked

// trigger returns the "/" command or "@" mention being typed before the
// caret: {kind, start, query}, or null.
function trigger() {
  const ta = $("#composer textarea");
  if (ta.selectionStart !== ta.selectionEnd) return null;
  const before = ta.value.slice(0, ta.selectionStart);
  let m = /^\/(\S*)$/.exec(before);
  if (m) return { kind: "/", start: 0, query: m[1] };
  m = /(^|\s)@(\S*)$/.exec(before);
  if (m) return { kind: "@", start: before.length - m[2].length - 1, query: m[2] };
  return null;
}

function updateMenu() {
  const t = trigger();
  if (!t || (t.kind === "@" && !has("files"))) return closeMenu();
  if (t.kind === "/") return showMenu(t, commandItems(t.query));
  const ask = ++filesAsked;
  const session = state.current;
  if (!session) return showMenu(t, [], "Files are listed once a session runs: send a first message.");
  if (!menu || menu.kind !== "@") showMenu(t, [], "Looking…");
  clearTimeout(updateMenu.timer);
  updateMenu.timer = setTimeout(async () => {
    try {
      const r = await hooks.request("session/files", { session, query: t.query, limit: FILES_LIMIT });
      if (ask !== filesAsked) return; // a later keystroke asked again
      const items = r.files.map((f) => ({ value: f.path, label: f.path, detail: f.dir ? "folder" : "", dir: f.dir }));
      showMenu(t, items, r.files.length ? "" : r.truncated ? "No match in what was listed: type more of the path." : "No matching file.");
    } catch (err) {
      if (ask === filesAsked) showMenu(t, [], `Files unavailable: ${err.message}`);
    }
  }, 80);
}

// commandItems lists the shown session's commands matching query: names
// starting with it first.
function commandItems(query) {
  const list = state.composer.commands.get(state.current) || [];
  const q = query.toLowerCase();
  const starts = [];
  const contains = [];
  for (const c of list) {
    const n = c.name.toLowerCase();
    if (n.startsWith(q)) starts.push(c);
    else if (q && (n.includes(q) || (c.description || "").toLowerCase().includes(q))) contains.push(c);
  }
  return [...starts, ...contains].slice(0, MENU_ITEMS).map((c) => ({
    value: c.name, label: `/${c.name}`, hint: c.hint || "", detail: [c.kind === "skill" ? "skill" : "", c.description || ""].filter(Boolean).join(" · "),
  }));
}

function showMenu(t, items, empty) {
  const box = $("#composer-menu");
  const keep = menu && menu.kind === t.kind ? menu.active : 0;
  menu = { ...t, items, active: Math.min(keep, Math.max(items.length - 1, 0)) };
  box.replaceChildren();
  box.dataset.kind = t.kind === "/" ? "commands" : "files";
  box.setAttribute("aria-label", t.kind === "/" ? "slash commands" : "files");
  if (!items.length) {
    const text = empty || (state.current ? "No matching command." : "Commands are listed once a session runs: send a first message.");
    box.append(el("div", "menu-empty", text));
  }
  items.forEach((it, i) => {
    const row = el("div", "menu-item");
    row.id = `composer-menu-${i}`;
    row.setAttribute("role", "option");
    row.dataset.value = it.value;
    row.setAttribute("aria-selected", String(i === menu.active));
    const name = el("span", "menu-name", it.label);
    if (it.hint) name.append(el("span", "menu-hint", ` ${it.hint}`));
    row.append(name);
    if (it.detail) row.append(el("span", "menu-detail", it.detail));
    row.addEventListener("mousedown", (e) => {
      e.preventDefault(); // the box keeps the focus
      choose(i);
    });
    box.append(row);
  });
  box.hidden = false;
  const ta = $("#composer textarea");
  ta.setAttribute("aria-expanded", "true");
  if (items.length) ta.setAttribute("aria-activedescendant", `composer-menu-${menu.active}`);
  else ta.removeAttribute("aria-activedescendant");
}

export function closeMenu() {
  menu = null;
  filesAsked++;
  const box = $("#composer-menu");
  box.hidden = true;
  box.replaceChildren();
  const ta = $("#composer textarea");
  ta.setAttribute("aria-expanded", "false");
  ta.removeAttribute("aria-activedescendant");
}

function moveActive(d) {
  if (!menu || !menu.items.length) return;
  menu.active = (menu.active + d + menu.items.length) % menu.items.length;
  const box = $("#composer-menu");
  for (const row of box.querySelectorAll(".menu-item")) row.setAttribute("aria-selected", String(row.id === `composer-menu-${menu.active}`));
  const row = $(`#composer-menu-${menu.active}`);
  if (row) row.scrollIntoView({ block: "nearest" });
  $("#composer textarea").setAttribute("aria-activedescendant", `composer-menu-${menu.active}`);
}

// choose puts item i of the menu into the box in place of what was
// typed: "/name " or "@path " ("@folder/" keeps the menu open on it).
function choose(i) {
  const it = menu && menu.items[i];
  if (!it) return;
  const ta = $("#composer textarea");
  const end = ta.selectionStart;
  // A path with a space is quoted, as the CLI reads it: @"a b.txt".
  const value = menu.kind === "@" && /\s/.test(it.value) ? `"${it.value}"` : it.value;
  const text = (menu.kind === "/" ? "/" : "@") + value + (it.dir ? "" : " ");
  ta.value = ta.value.slice(0, menu.start) + text + ta.value.slice(end);
  const caret = menu.start + text.length;
  ta.setSelectionRange(caret, caret);
  ta.focus();
  closeMenu();
  grow();
  if (it.dir && value === it.value) updateMenu();
}

// menuKeys: while a menu is open, arrows move, Enter and Tab choose, Esc
// closes it (and nothing else happens with those keys).
function menuKeys(e) {
  if (!menu || e.target !== $("#composer textarea") || e.isComposing) return;
  const keys = {
    ArrowDown: () => moveActive(1),
    ArrowUp: () => moveActive(-1),
    Enter: () => (menu.items.length ? choose(menu.active) : closeMenu()),
    Tab: () => choose(menu.active),
    Escape: () => closeMenu(),
  };
  const k = keys[e.key];
  if (!k || (e.key === "Enter" && e.shiftKey) || (e.key === "Tab" && !menu.items.length)) return;
  e.preventDefault();
  e.stopPropagation();
  k();
}

// ---- keys anywhere ----

const editable = (t) => t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName));

function globalKeys(e) {
  if (e.isComposing || document.querySelector("dialog[open]")) return;
  // Esc: interrupt the turn running in the session shown.
  if (e.key === "Escape" && !menu && document.body.dataset.sidebar !== "open") {
    const stop = $("#interrupt");
    if (!stop.disabled) {
      e.preventDefault();
      stop.click();
    }
    return;
  }
  // ?: the shortcuts, when not typing (or in the empty box).
  if (e.key === "?" && !e.ctrlKey && !e.metaKey && !e.altKey) {
    const ta = $("#composer textarea");
    if (editable(e.target) && !(e.target === ta && ta.value === "")) return;
    e.preventDefault();
    openShortcuts();
  }
}

function openShortcuts() {
  closeMenu();
  $("#shortcuts .image-note").textContent = imageNote();
  $("#shortcuts").showModal();
}
