// A server's tools in its panel (mcp/tools): each with its description, a
// table of its parameters (nested ones by their path, with their
// constraints) and, with mcp.call, a form to call it (mcp/call) that checks
// what it can before sending and shows the normalized result — text,
// attachments, structured content — or the proxy's validation errors by
// field. Everything a tool returns is put into the page as text, but an
// image attachment, shown as an image.

import { el, api } from "./dom.js";
import { has } from "./store.js";
import { request } from "./mcp-actions.js";

// renderTools lists tools (mcp/tools's) of server in box.
export function renderTools(box, server, tools) {
  box.replaceChildren();
  for (const t of tools) {
    const d = el("details", "mcp-tool");
    d.dataset.tool = t.name;
    const sum = el("summary");
    sum.append(el("span", "tool-name", t.name));
    if (t.title && t.title !== t.name) sum.append(el("span", "tool-title", ` — ${t.title}`));
    d.append(sum);
    if (t.description) d.append(el("p", "tool-desc", t.description));
    if (t.parameters && t.parameters.length) d.append(paramTable(t.parameters));
    else d.append(el("p", "tool-noparams", "No parameters."));
    if (has("mcp.call")) d.append(callForm(server, t));
    box.append(d);
  }
}

// paramTable lists the parameter tree, one row per parameter (nested
// ones by their path).
function paramTable(params) {
  const table = el("table", "params");
  const head = el("tr");
  for (const h of ["parameter", "type", "", "description"]) head.append(el("th", "", h));
  table.append(head);
  const walk = (p) => {
    const tr = el("tr");
    tr.dataset.path = p.path;
    const cons = [];
    if (p.enum) cons.push(`one of ${p.enum.map((v) => JSON.stringify(v)).join(", ")}`);
    if (p.minimum !== undefined) cons.push(`≥ ${p.minimum}`);
    if (p.maximum !== undefined) cons.push(`≤ ${p.maximum}`);
    if (p.minLength !== undefined) cons.push(`≥ ${p.minLength} chars`);
    if (p.maxLength !== undefined) cons.push(`≤ ${p.maxLength} chars`);
    if (p.pattern) cons.push(`matches ${p.pattern}`);
    if (p.format) cons.push(p.format);
    if (p.default !== undefined) cons.push(`default ${JSON.stringify(p.default)}`);
    if (p.unsupported) cons.push(`(${p.unsupported})`);
    tr.append(el("td", "mono", p.path), el("td", "", `${p.type}${p.nullable ? " | null" : ""}`), el("td", "req", p.required ? "required" : ""),
      el("td", "", [p.description, cons.join("; ")].filter(Boolean).join(" — ")));
    table.append(tr);
    for (const k of p.properties || []) walk(k);
    if (p.items) walk(p.items);
  };
  params.forEach(walk);
  return table;
}

// callForm is a form with one field per top-level parameter; it checks
// what it can (required, numbers, JSON), sends mcp/call and shows the
// normalized result, or the proxy's validation errors by field.
function callForm(server, tool) {
  const form = el("form", "mcp-call");
  form.noValidate = true;
  const fields = [];
  for (const p of tool.parameters || []) {
    const label = el("label", "field");
    label.dataset.param = p.name;
    label.append(el("span", "label", `${p.name}${p.required ? " *" : ""}`));
    let input;
    if (p.enum && ["string", "number", "integer"].includes(p.type)) {
      input = el("select");
      input.append(new Option(p.required ? "(choose)" : "(unset)", ""));
      for (const v of p.enum) input.append(new Option(String(v), JSON.stringify(v)));
      input.dataset.kind = "json";
    } else if (p.type === "boolean") {
      input = el("select");
      for (const [t, v] of [["(unset)", ""], ["true", "true"], ["false", "false"]]) input.append(new Option(t, v));
      input.dataset.kind = "json";
    } else if (p.type === "number" || p.type === "integer") {
      input = el("input");
      input.type = "number";
      input.step = p.type === "integer" ? "1" : "any";
      if (p.minimum !== undefined) input.min = String(p.minimum);
      if (p.maximum !== undefined) input.max = String(p.maximum);
      input.dataset.kind = p.type;
    } else if (p.type === "string") {
      input = el("input");
      input.dataset.kind = "string";
    } else {
      input = el("textarea");
      input.rows = 2;
      input.placeholder = p.type === "array" ? "JSON array, e.g. []" : p.type === "object" ? "JSON object, e.g. {}" : "JSON value";
      input.dataset.kind = "json";
    }
    input.name = p.name;
    if (p.default !== undefined && input.tagName !== "SELECT") input.placeholder = `default: ${JSON.stringify(p.default)}`;
    const err = el("span", "field-error");
    label.append(input, err);
    form.append(label);
    fields.push({ p, input, err });
  }
  const actions = el("div", "call-actions");
  const run = el("button", "call", `Call ${tool.name}`);
  run.type = "submit";
  actions.append(run);
  const out = el("div", "mcp-call-result");
  out.hidden = true;
  form.append(actions, out);
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const args = {};
    let bad = false;
    for (const f of fields) {
      f.err.textContent = "";
      const raw = f.input.value;
      if (raw.trim() === "") {
        if (f.p.required) {
          f.err.textContent = "required";
          bad = true;
        }
        continue;
      }
      try {
        args[f.p.name] = fieldValue(f.input.dataset.kind, raw, f.p);
      } catch (e) {
        f.err.textContent = e.message;
        bad = true;
      }
    }
    if (bad) return;
    run.disabled = true;
    out.hidden = false;
    out.dataset.state = "calling";
    out.replaceChildren(el("div", "meta", "calling…"));
    try {
      const r = await request("mcp/call", { name: server, tool: tool.name, arguments: args });
      showResult(out, r);
    } catch (e) {
      out.dataset.state = "error";
      out.replaceChildren(el("div", "meta", `${e.code ? e.code + ": " : ""}${e.message}`));
      for (const f of e.details?.fields || []) {
        const top = String(f.path).split(/[.[]/)[0];
        const field = fields.find((x) => x.p.name === top);
        if (field) field.err.textContent = `${f.message}${f.path !== top ? ` (${f.path})` : ""}`;
        else out.append(el("div", "field-error", `${f.path}: ${f.message}`));
      }
    } finally {
      run.disabled = false;
    }
  };
  return form;
}

// fieldValue turns a field's text into the argument's value.
function fieldValue(kind, raw, p) {
  if (kind === "string") return raw;
  if (kind === "integer" || kind === "number") {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new Error("not a number");
    if (kind === "integer" && !Number.isInteger(n)) throw new Error("not a whole number");
    if (p.minimum !== undefined && n < p.minimum) throw new Error(`must be ≥ ${p.minimum}`);
    if (p.maximum !== undefined && n > p.maximum) throw new Error(`must be ≤ ${p.maximum}`);
    return n;
  }
  try {
    const v = JSON.parse(raw);
    if (p.type === "array" && !Array.isArray(v)) throw new Error("want a JSON array");
    if (p.type === "object" && (v === null || typeof v !== "object" || Array.isArray(v))) throw new Error("want a JSON object");
    return v;
  } catch (e) {
    throw new Error(e instanceof SyntaxError ? `not valid JSON: ${e.message}` : e.message);
  }
}

// showResult renders an mcp/call reply: the normalized text, attachments
// and structured content, marked when the tool reported an error.
function showResult(out, r) {
  out.dataset.state = r.isError ? "tool-error" : "ok";
  const parts = [el("div", "meta", `${r.isError ? "the tool reported an error" : "result"} · ${Math.round(r.durationMs)} ms`), el("pre", "content", r.content)];
  for (const a of r.attachments || []) {
    const src = api(a.url) || (a.data ? `data:${a.mediaType || "application/octet-stream"};base64,${a.data}` : null);
    if (a.kind === "image" && src) {
      const img = el("img");
      img.src = src;
      img.alt = `${a.mediaType || "image"} from the tool`;
      parts.push(img);
    } else parts.push(el("div", "att", `[${a.kind} ${a.mediaType || ""} ${a.size} bytes${a.error ? " — " + a.error : ""}]`));
  }
  if (r.structuredContent !== undefined) {
    parts.push(el("div", "meta", "structured content"), el("pre", "structured", JSON.stringify(r.structuredContent, null, 2)));
  }
  out.replaceChildren(...parts);
}
