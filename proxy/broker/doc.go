// Package broker is the permission broker of one proxy session: claude's
// can_use_tool control requests become permission/request pushes to every
// subscriber of the session, and the first answer (or the timeout, for
// tool uses) becomes claude's reply. It also keeps the session's
// permission mode. It does not import package proxy: a proxy.Session makes
// its Broker with New and is seen by it only through the small Session
// interface (push to subscribers, has it exited, do the permission rules
// allow a tool); the process that asked is a Process (Answer), the counts
// go to Metrics, and "always" rules are written by a RuleRecorder.
//
// # Data flow
//
//	claude can_use_tool ─► Request: classified (tool use, AskUserQuestion's questions,
//	  ExitPlanMode's plan) ─┬─ allowed by the session's rules (Session.Allows): claude gets allow at once
//	                       └─ pending: permission/request ─► Session.Push; the timer armed (tool uses only)
//	permission/respond ─► Respond: checked, claude's reply ─► Process.Answer; permission/resolved ─► Session.Push
//	timeout ─► deny ─► Process.Answer, permission/resolved (reason timeout)
//	control_cancel_request ─► Withdraw; claude's exit ─► CancelOf, CancelAll: permission/resolved (cancelled)
//
// Each can_use_tool is a permission/request of a kind: a tool use,
// AskUserQuestion's questions, or ExitPlanMode's plan; questions and plans
// never time out (they wait for a person). A tool the session's current
// permission rules allow (the MCP configuration's AllowedTools minus
// DisallowedTools: the settings' permissions.allow/deny, plus every active
// server with serve --allow-mcp-tools) is allowed without asking; so a
// rule written after claude started takes effect at once. More than
// Config.MaxPending pending requests: the next is denied at once.
//
// An answer becomes claude's reply: answers are added to the question's
// input as "answers" (each key must be a question asked, checkAnswers).
// "always" is checked like any answer, then claims the request
// (permission.answering, under the session's lock: other answers get
// already_resolved, the timeout waits for the claim), has the
// RuleRecorder (the MCP source, mcphub.ConfigSource.AllowRules) write the
// suggested rules to the session's .claude/settings.local.json outside the
// lock, and only then answers, adding them as updatedPermissions with
// destination "session", so claude applies them at once (without a
// recorder, destination "localSettings": claude writes them itself). So a
// rule is only ever written for an answer that is valid and has won. A
// failed write releases the claim (the request stays pending, or is
// denied if its timeout passed meanwhile). Claude's withdrawal or exit
// during the write is not held up: the request is cancelled, the rule the
// person chose stays, and the client is told. Logs name the rules' tools,
// never a rule's content (a Bash prefix may hold a token).
//
// The permission mode (Mode, SetMode, NoteMode) is what claude last
// reported in system/init or system/status, or what the session set with
// session/setPermissionMode (the proxy's Session.setPermissionMode sends
// claude's set_permission_mode); a restarted process starts in it, and
// session/state and session/list carry it. Measured on the real CLI
// 2.1.329: docs/CLI-NOTES.md.
//
// # Goroutines
//
// None of its own: Request, Respond and Withdraw run on their callers'
// goroutines (claude's stdout reader, the connection's request handler).
// Each pending tool use arms a time.AfterFunc, counted in the broker's wg
// when armed and released when it runs or is stopped; Wait waits for them
// (the session's close calls it after its last process ended, when every
// pending request was cancelled and so every timer stopped).
//
// # Locks
//
// The broker has no lock of its own: perms, resolved and mode are guarded
// by the session's lock (the *sync.Mutex given to New, proxy's
// Session.mu). Request, Respond, Withdraw and the timers take it; every
// other method is called with it held. Session.Push, Session.Exited and
// Metrics are called with it held, Session.Allows and
// RuleRecorder.AllowRules without it; Process.Answer never blocks.
package broker
