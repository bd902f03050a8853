// normalize.mjs: the Node approach of peer chat extensions, as a process to
// compare `ccproxy normalize --attachments strip` with (see
// internal/benchmix/cmd/bench). Plain Node, no npm dependencies.
//
// stream-json on stdin, one normalized event per line on stdout: parse every
// line, flatten tool_result content arrays (and tool_use_result) to text with
// a placeholder and a stripped attachment {kind, mediaType, size, sha256} per
// image, audio, document or blob, annotate MCP tool_use / tool_result blocks
// and streamed tool_use starts with "mcp": {server, tool}, stringify.
import { createHash } from 'node:crypto';

let servers = [];
const tools = new Map();

function fmtSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

function binary(kind, mediaType, uri, data, atts) {
  const buf = Buffer.from(data ?? '', 'base64');
  const a = { kind };
  if (mediaType) a.mediaType = mediaType;
  a.size = buf.length;
  a.sha256 = createHash('sha256').update(buf).digest('hex');
  if (uri) a.uri = uri;
  if (!atts.some((x) => x.sha256 === a.sha256)) atts.push(a);
  return `[${kind}${mediaType ? ' ' + mediaType : ''}${uri ? ' ' + uri : ''} ${fmtSize(buf.length)}]`;
}

function flatten(content) {
  const parts = [];
  const atts = [];
  for (const b of Array.isArray(content) ? content : [content]) {
    if (b === null || typeof b !== 'object') {
      parts.push(typeof b === 'string' ? b : JSON.stringify(b));
      continue;
    }
    switch (b.type) {
      case 'text':
        parts.push(b.text ?? '');
        break;
      case 'image': case 'audio': case 'document':
        if (b.source) {
          if (b.source.type === 'url') {
            parts.push(`[${b.type} ${b.source.url}]`);
            atts.push({ kind: b.type, url: b.source.url });
          } else parts.push(binary(b.type, b.source.media_type, '', b.source.data, atts));
        } else parts.push(binary(b.type, b.mimeType, '', b.data, atts));
        break;
      case 'resource':
        if (b.resource?.text !== undefined) parts.push(b.resource.text);
        else parts.push(binary('resource', b.resource?.mimeType, b.resource?.uri, b.resource?.blob, atts));
        break;
      case 'resource_link':
        parts.push(!b.name || b.name === b.uri ? `[resource link] ${b.uri}` : `[resource link: ${b.name}] ${b.uri}`);
        break;
      default: {
        const raw = Buffer.from(JSON.stringify(b));
        const a = { kind: b.type || 'block', mediaType: 'application/json', size: raw.length,
          sha256: createHash('sha256').update(raw).digest('hex') };
        atts.push(a);
        parts.push(`[${a.kind} application/json ${fmtSize(raw.length)}]`);
      }
    }
  }
  return { text: parts.join('\n'), atts };
}

function resolve(name) {
  if (typeof name !== 'string' || !name.startsWith('mcp__')) return null;
  const rest = name.slice(5);
  let best = '';
  for (const s of servers) {
    if (s.length > best.length && rest.startsWith(s + '__') && rest.length > s.length + 2) best = s;
  }
  if (best) return { server: best, tool: rest.slice(best.length + 2) };
  const i = rest.indexOf('__');
  return i > 0 && i + 2 < rest.length ? { server: rest.slice(0, i), tool: rest.slice(i + 2) } : null;
}

function normalize(ev) {
  switch (ev.type) {
    case 'system':
      if (ev.subtype === 'init' && Array.isArray(ev.mcp_servers)) {
        servers = ev.mcp_servers.map((s) => String(s.name).replace(/[^A-Za-z0-9_-]/g, '_'));
      }
      break;
    case 'assistant':
      for (const b of ev.message?.content ?? []) {
        const ref = b?.type === 'tool_use' && resolve(b.name);
        if (ref) { b.mcp = ref; tools.set(b.id, ref); }
      }
      break;
    case 'stream_event': {
      const cb = ev.event?.type === 'content_block_start' && ev.event.content_block;
      const ref = cb?.type === 'tool_use' && resolve(cb.name);
      if (ref) { cb.mcp = ref; tools.set(cb.id, ref); }
      break;
    }
    case 'user': {
      const content = ev.message?.content;
      if (Array.isArray(content)) {
        for (const b of content) {
          if (b?.type !== 'tool_result') continue;
          if (Array.isArray(b.content)) {
            const { text, atts } = flatten(b.content);
            b.content = text;
            if (atts.length) b.attachments = atts;
          } else if (b.content == null) b.content = '';
          const ref = tools.get(b.tool_use_id);
          if (ref) b.mcp = ref;
        }
      }
      const tur = ev.tool_use_result;
      if (Array.isArray(tur)) {
        const { text, atts } = flatten(tur);
        ev.tool_use_result = atts.length ? { content: text, attachments: atts } : { content: text };
      } else if (tur && Array.isArray(tur.content)) {
        const { text, atts } = flatten(tur.content);
        tur.content = text;
        if (atts.length) tur.attachments = atts;
      }
      break;
    }
  }
  return ev;
}

function line(l) {
  if (l.length === 0) return '';
  let out;
  try {
    const ev = JSON.parse(l);
    out = ev !== null && typeof ev === 'object' && !Array.isArray(ev)
      ? normalize(ev) : { type: 'ccproxy', subtype: 'noise', text: l.slice(0, 4096) };
  } catch {
    out = { type: 'ccproxy', subtype: 'noise', text: l.slice(0, 4096) };
  }
  return JSON.stringify(out) + '\n';
}

let rest = '';
let out = [];
let outBytes = 0;
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) {
  const s = rest + chunk;
  let start = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', start)) {
    const o = line(s.slice(start, i).trim());
    out.push(o);
    outBytes += o.length;
    start = i + 1;
  }
  rest = s.slice(start);
  if (outBytes >= 1 << 18) {
    process.stdout.write(out.join(''));
    out = [];
    outBytes = 0;
  }
}
out.push(line(rest.trim()));
process.stdout.write(out.join(''));
