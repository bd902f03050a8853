// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk),
// driven by acp/e2e_test.go. It spawns the agent as an editor does and runs
// a scenario; every observation is one JSON line on stdout:
//   {"ev":"init"|"new"|"update"|"permission"|"stop"|"error"|"exit", ...}
// Usage: node client.mjs '<json: {cmd:[...], cwd, env, load?:{sessionId, prompt}, resume?:{sessionId, prompt}, mcpServers?:[...], badNew?:[[...]], sessions:[[{text, onPermission:"allow"|"cancel"} | {config:{configId, value}}]]}>'
// A session's item with config is session/set_config_option ("config"); one
// with wait waits until the session has had updates of each kind it lists
// ("waited", before any prompt when it comes first; at most 90 s, then an
// "error").
// resume: session/list of cwd ("listed"), session/resume of the session
// ("resumed"), the prompt ("stop"), session/list again ("listed").
// mcpServers go with every session/new; each list of badNew is tried as the
// mcpServers of a session/new that must fail (its error is an observation).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const cfg = JSON.parse(process.argv[2]);
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

const child = spawn(cfg.cmd[0], cfg.cmd.slice(1), { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, ...(cfg.env || {}) } });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

let onPermission = "allow";
let agentCtx = null;
const kinds = new Map(); // sessionId -> Set of the sessionUpdate kinds seen
let kindSeen = () => {};
const app = client({ name: "ccproxy-acp-test" })
  .onNotification(methods.client.session.update, ({ params }) => {
    out({ ev: "update", sessionId: params.sessionId, update: params.update });
    if (!kinds.has(params.sessionId)) kinds.set(params.sessionId, new Set());
    kinds.get(params.sessionId).add(params.update.sessionUpdate);
    kindSeen();
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    out({ ev: "permission", params, answer: onPermission });
    if (onPermission === "cancel") {
      // The user cancels the turn while asked: session/cancel, then the
      // pending request is answered cancelled, as the protocol requires.
      await agentCtx.notify(methods.agent.session.cancel, { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: onPermission } };
  });

try {
  await app.connectWith(stream, async (ctx) => {
    agentCtx = ctx;
    const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    out({ ev: "init", result: init });
    try {
      await ctx.request("no/such_method", {});
    } catch (e) {
      out({ ev: "error", method: "no/such_method", code: e.code, message: e.message });
    }
    if (cfg.load) {
      // session/load of a stored session: its history arrives as updates
      // before the response; then it takes a prompt like a new one.
      const l = await ctx.request(methods.agent.session.load, { sessionId: cfg.load.sessionId, cwd: cfg.cwd, mcpServers: [] });
      out({ ev: "loaded", sessionId: cfg.load.sessionId, result: l });
      const r = await ctx.request(methods.agent.session.prompt, { sessionId: cfg.load.sessionId, prompt: [{ type: "text", text: cfg.load.prompt }] });
      out({ ev: "stop", sessionId: cfg.load.sessionId, result: r });
    }
    if (cfg.resume) {
      // An editor's session picker: list the project's sessions, continue
      // one without a replay, prompt it, list again.
      out({ ev: "listed", result: await ctx.request(methods.agent.session.list, { cwd: cfg.cwd }) });
      const r = await ctx.request(methods.agent.session.resume, { sessionId: cfg.resume.sessionId, cwd: cfg.cwd, mcpServers: [] });
      out({ ev: "resumed", sessionId: cfg.resume.sessionId, result: r });
      const p = await ctx.request(methods.agent.session.prompt, { sessionId: cfg.resume.sessionId, prompt: [{ type: "text", text: cfg.resume.prompt }] });
      out({ ev: "stop", sessionId: cfg.resume.sessionId, result: p });
      out({ ev: "listed", result: await ctx.request(methods.agent.session.list, { cwd: cfg.cwd }) });
    }
    for (const bad of cfg.badNew || []) {
      try {
        const s = await ctx.request(methods.agent.session.new, { cwd: cfg.cwd, mcpServers: bad });
        out({ ev: "new", result: s, unexpected: true });
      } catch (e) {
        out({ ev: "error", method: "session/new", code: e.code, message: e.message, data: e.data });
      }
    }
    for (const sess of cfg.sessions) {
      const s = await ctx.request(methods.agent.session.new, { cwd: cfg.cwd, mcpServers: cfg.mcpServers || [] });
      out({ ev: "new", result: s });
      for (const p of sess) {
        if (p.wait) {
          // Bounded: a failure, not a hang, when they never come.
          const have = () => p.wait.every((k) => kinds.get(s.sessionId)?.has(k));
          const until = Date.now() + 90000;
          while (!have() && Date.now() < until) {
            let timer;
            await new Promise((resolve) => {
              kindSeen = resolve;
              timer = setTimeout(resolve, until - Date.now());
            });
            // A pending timer keeps node running: without this the script
            // exited only when the 90 s were up, its work long done.
            clearTimeout(timer);
          }
          out(have() ? { ev: "waited", sessionId: s.sessionId, kinds: p.wait } : { ev: "error", method: "wait", message: `no ${p.wait} in 90 s` });
          continue;
        }
        if (p.config) {
          // A config option set as an editor's picker does.
          try {
            const c = await ctx.request(methods.agent.session.setConfigOption, { sessionId: s.sessionId, ...p.config });
            out({ ev: "config", sessionId: s.sessionId, result: c });
          } catch (e) {
            out({ ev: "error", method: "session/set_config_option", code: e.code, message: e.message, data: e.data });
          }
          continue;
        }
        onPermission = p.onPermission || "allow";
        const prompt = [{ type: "text", text: p.text }];
        if (p.link) prompt.push({ type: "resource_link", uri: p.link, name: "link" });
        const r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt });
        out({ ev: "stop", sessionId: s.sessionId, result: r });
      }
    }
  });
} catch (e) {
  out({ ev: "error", message: String(e && e.stack || e) });
}
// Exit as an editor does: close the agent's stdin and wait for it.
child.stdin.end();
out({ ev: "exit", ...(await exited) });
