// Small DOM helpers shared by the UI's modules. el puts text into the page
// with textContent, never as HTML.

// api makes a path of the proxy's ("/v1/blobs/…", as the protocol names
// them) relative to the page, so that the UI works under a reverse proxy's
// path prefix (serve --public-url https://host/prefix): the page is at
// /prefix/, and v1/… is then /prefix/v1/…. Other URLs pass unchanged.
// The result is an absolute path ("/v1/…" when the page is at "/").
export const api = (path) => {
  if (typeof path !== "string" || !path.startsWith("/v1/")) return path;
  const u = new URL(path.slice(1), document.baseURI);
  return u.pathname + u.search;
};

// $ is the first element matching the CSS selector sel.
export const $ = (sel) => document.querySelector(sel);

// el makes a <tag> element with class cls and text (both optional).
export const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
