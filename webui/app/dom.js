// Small DOM helpers shared by the UI's modules. el puts text into the page
// with textContent, never as HTML.

// $ is the first element matching the CSS selector sel.
export const $ = (sel) => document.querySelector(sel);

// el makes a <tag> element with class cls and text (both optional).
export const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
