// The theme switch: system (the default: the stylesheet's dark rules apply
// under prefers-color-scheme: dark), light or dark, remembered in
// localStorage. A choice rewrites the media of the dark rules (style.css's
// one @media block and the dark highlighting sheet) to "all" or "not all",
// so the colours live in one place. Inside a VS Code webview the editor's
// theme variables still win.

const KEY = "ccproxy.theme";
const SYSTEM_DARK = "(prefers-color-scheme: dark)";
const CHOICES = ["system", "light", "dark"];
const LABELS = { system: "◐", light: "☀", dark: "☾" };

let darkRules = null; // the CSSMediaRules and <link>s whose media decide dark

function findDarkRules() {
  const found = [];
  for (const sheet of document.styleSheets) {
    let rules;
    try {
      rules = sheet.cssRules;
    } catch {
      continue; // not readable: not ours
    }
    for (const r of rules) {
      if (r instanceof CSSMediaRule && r.media.mediaText === SYSTEM_DARK) found.push({ media: r.media, dark: true });
    }
  }
  for (const link of document.querySelectorAll("link[data-scheme]")) found.push({ link, dark: link.dataset.scheme === "dark" });
  return found;
}

// stored is the remembered choice ("system" when none, or unreadable).
export function stored() {
  try {
    const v = localStorage.getItem(KEY);
    return CHOICES.includes(v) ? v : "system";
  } catch {
    return "system";
  }
}

// apply makes choice the page's theme (without remembering it).
export function apply(choice) {
  if (!darkRules) darkRules = findDarkRules();
  const on = choice === "dark" ? "all" : choice === "light" ? "not all" : SYSTEM_DARK;
  const off = choice === "dark" ? "not all" : choice === "light" ? "all" : `not all and ${SYSTEM_DARK}`;
  for (const r of darkRules) {
    const media = r.dark ? on : off;
    if (r.link) r.link.media = media;
    else r.media.mediaText = media;
  }
  document.documentElement.dataset.theme = choice;
  // Form controls and scrollbars follow too.
  document.documentElement.style.colorScheme = choice === "system" ? "light dark" : choice;
}

// initTheme applies the remembered choice and makes button cycle
// system → light → dark, remembering each.
export function initTheme(button) {
  const show = (choice) => {
    const next = CHOICES[(CHOICES.indexOf(choice) + 1) % CHOICES.length];
    button.textContent = LABELS[choice];
    button.title = `Theme: ${choice} (click for ${next})`;
    button.setAttribute("aria-label", button.title);
    button.dataset.theme = choice;
  };
  const choice = stored();
  apply(choice);
  show(choice);
  button.hidden = false;
  button.addEventListener("click", () => {
    const next = CHOICES[(CHOICES.indexOf(stored()) + 1) % CHOICES.length];
    try {
      localStorage.setItem(KEY, next);
    } catch {
      // not remembered (storage off): applied still
    }
    apply(next);
    show(next);
  });
}
