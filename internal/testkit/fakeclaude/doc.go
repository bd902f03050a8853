// Package fakeclaude is the fake Claude Code CLI of ccproxy's fast unit
// tests: the test binary impersonates claude (like os/exec's tests and
// go-sdk's mcp/cmd_test.go). It never replaces the end-to-end tests
// against the real CLI; it plays the stream-json protocol of
// FACTS §5–§6 (docs/CLI-NOTES.md) closely enough for the client,
// the session and the proxy to be tested without one.
//
// # How a test package uses it
//
//	func TestMain(m *testing.M) {
//		fakeclaude.Run(m, func(s fakeclaude.Scripts) { fakeClaudePath = s.Claude })
//	}
//
// Run writes two shell scripts to a temporary directory, each setting
// CCPROXY_FAKE_CLAUDE=1 (Env) and exec'ing the test binary
// (testkit.SelfCommand): Scripts.Claude, and Scripts.Old, whose --version
// is OldVersion. A test runs a script like any claude executable, adding
// the FAKE_* variables below to its environment. In the process a script
// starts, Run sees Env and runs Main instead of the tests.
//
// # What Main does
//
//   - --version prints "VERSION (Claude Code)": Version, or $FAKE_VERSION.
//   - mcp login [--no-browser] [--] NAME / mcp logout [--] NAME play the CLI's MCP OAuth commands (-h before "--": the usage, exit 0)
//     (see mcpAuth: FAKE_LOGIN, FAKE_LOGIN_GATE, FAKE_LOGIN_PIDFILE,
//     FAKE_LOGOUT).
//   - Otherwise it reads stream-json lines on stdin until EOF, then exits
//     0. A line that is not JSON ends it with status 1 and the real CLI's
//     message on stderr. It reads --include-partial-messages (each
//     assistant text is then preceded by its text_delta stream_event),
//     --replay-user-messages (honoured with FAKE_REPLAY=1 only: each user
//     turn is echoed, isReplay, as it starts), --resume ID (the session
//     id; else "fake-session-1"; with --fork-session, "fork-of-ID") and
//     --mcp-config FILE (its mcpServers are the connected servers), and
//     --await-claim (a spare: parked, it prints one system/ui_invalidate
//     and answers a user message with a result error_during_execution
//     until claim_session {cwd, permission_mode?, include_initialize?}
//     moves it to cwd; a cwd that does not exist: cwd_not_found, still
//     parked; a second claim, or one without --await-claim: not_a_spare).
//
// Control requests from the host: initialize (its models: default and
// opus resolve to fake-model, sonnet to fake-sonnet, haiku to fake-haiku;
// FAKE_MODELS replaces them), interrupt (ends a "hang"
// turn), mcp_status (the servers, each connected with tools echo and
// image; disabled when toggled off), mcp_set_servers (replaces the set it
// sent before; as in the real CLI, never removes a --mcp-config server; a
// stdio server without args gets the real CLI's error), mcp_toggle (of a
// server it has; unlike the real CLI it records nothing in
// ~/.claude.json; another name: "Server not found: NAME"), set_model (as
// the real CLI: "" refused, any other name taken and reported by the next
// system/init; with FAKE_REPLAY=1 the "Set model to" echo first;
// models.go) and set_permission_mode (the mode in the reply and a
// system/status, then in each system/init, as --permission-mode sets it
// at start) are answered; "slow" never is; any other
// subtype gets the real CLI's "Unsupported control request subtype" error.
//
// The fake's own control requests have ids fake-req-N, N the lowest not
// pending, and wait at most 30s for the host's answer.
//
// # Turns
//
// Each user turn starts with a system/init event; the text's first word
// then picks what the turn does (most end with a result event):
//
//	flood N [BYTES]  N assistant events (texts of BYTES bytes), then a result
//	ask              a can_use_tool request; the whole answer object is echoed ("answer: {...}")
//	perm [TOOL]      a can_use_tool request for TOOL (Bash); its response is echoed ("permission answer: ...")
//	permtwice        two can_use_tool requests pending at once; the second's answer is
//	                 reported when it arrives, then both answers echoed
//	questions        an AskUserQuestion can_use_tool request with two questions; its response is echoed
//	permcancel       a can_use_tool request, withdrawn at once by control_cancel_request
//	cancel           the same as permcancel
//	ctl [SUBTYPE]    a control request of SUBTYPE (hook_callback); the answer is echoed
//	hang             "working on it", then waits (60s at most) for an interrupt
//	noise            a line that is not JSON, then a normal answer
//	big [N]          an assistant text N bytes long (1 MiB)
//	stderr [N]       N lines "stderr line I" on stderr (10)
//	exit [CODE]      "bye" and "fatal: the fake was told to exit" on stderr, exit with CODE (1)
//	bg [hold]        a turn, then one the fake starts by itself (task_notification,
//	                 system/init, text, result); with hold, that turn's result waits for
//	                 the next user message
//	commands NAME... a system/commands_changed event listing the commands NAME..., then a result
//	pid              reports the fake's pid ("pid N")
//	child            starts "sleep 300" (it inherits the process group) and reports its pid
//	mcpfail SRV TEXT a call of SRV's tool q that fails with TEXT
//	image            a tool_use and a tool_result with an image, as an MCP tool returns it
//	anything else    "echo: TEXT", then a result
//
// # Environment
//
//	FAKE_VERSION          the version --version reports
//	FAKE_ARGS_FILE        the arguments are written there as a JSON array
//	FAKE_ASK_ON_EOF       at stdin EOF, sends a can_use_tool request (fake-eof-1) and ends
//	FAKE_STARTUP_STDERR   a line written to stderr at start
//	FAKE_IGNORE_CONTROL   SUBTYPE: host control requests of SUBTYPE go unanswered; SUBTYPE:N the first N
//	FAKE_REFUSE_SET       1: mcp_set_servers answers an error (a refusal) when it adds a server
//	FAKE_SET_ERRORS       1: mcp_set_servers answers success with every added server in errors (cannot connect)
//	FAKE_MODELS           a JSON array: the initialize reply's models
//	FAKE_COMMANDS         a JSON array: the initialize reply's commands (else none)
//	FAKE_INIT_GATE        a FIFO: initialize is answered (and no other line read) once a byte is read from it
//	FAKE_REFUSE_MODEL     NAME: set_model of NAME is refused like an unknown id
//	FAKE_REPLAY           1: honour --replay-user-messages
//	FAKE_IGNORE_EOF       1: stdin EOF does not end the fake (a signal does)
//	FAKE_IGNORE_TERM      1: SIGTERM is ignored
//	FAKE_EXIT_ON_USR1     1: stdin EOF does not end the fake; ExitSignal (SIGUSR1) does, with status 0
//	FAKE_SPARE_EXIT       1: with --await-claim, exits at once with status 1 (a spare that dies parked)
//	FAKE_CLAIM_REFUSE     1: claim_session is refused as for a cwd that does not exist (cwd_not_found)
//	FAKE_CLAIM_EVENTS     N: after answering claim_session, prints N system/status events (status "claimed-1"…)
//
// # Goroutines and locks
//
// Main's goroutine reads stdin and answers the host's control requests at
// once; one goroutine it owns plays the user turns in order (queued in a
// channel) and is joined before Main returns. permtwice starts one more
// for its second request, ended by the answer or the 30s bound. With
// FAKE_EXIT_ON_USR1 one more waits for ExitSignal and ends the process.
// After stdin EOF, FAKE_IGNORE_EOF and FAKE_EXIT_ON_USR1 make Main sleep
// until a signal ends the process (not select{}, which the runtime may end
// as a deadlock). outMu
// guards stdout (one whole line per write); mu guards the pending
// requests, the server set, the model, the interrupt channel of a "hang" turn, the
// FAKE_IGNORE_CONTROL count and the turns read but not started (an
// interrupt read after a turn that the turn goroutine has not started yet
// ends that turn when it starts, as the real CLI, which starts a turn as
// it reads it, would).
package fakeclaude
