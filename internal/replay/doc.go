// Package replay impersonates the Claude Code CLI by replaying a recorded
// stream-json session, so that `ccproxy serve --demo` (and tests) run the
// proxy's normal code path against a real child process with no CLI and no
// API key.
//
// # Data flow
//
//	transcript (.jsonl[.gz], or the embedded demo: made by gendemo from
//	    │        the real CLI's capture, its one MCP server named demo and
//	    │        its models those people know; its capture's /tmp folders
//	    │        shown as /home/demo, Demo)
//	    │ Parse: split into turns (system/init … result); keep recorded
//	    ▼        control responses (initialize, mcp_status) and the prelude
//	Transcript
//	    │
//	stdin ──► reader goroutine ──► session loop ──► stdout
//	          lines, checked       one goroutine: plays a turn per user
//	          JSON objects         message, answers control requests,
//	                               waits for permission answers, paces
//
// Run reads stream-json lines from stdin exactly as the CLI does in
// `--input-format stream-json` mode. A user message plays the next recorded
// turn: its system/init (with the session's model, permission mode and MCP
// servers), the echo of the user's own message (with ReplayUserMessages),
// the stream_events (with PartialMessages), assistant and tool events, and
// the result, at a realistic pace scaled by Options.Speed (0: no delays).
// A recorded can_use_tool request is sent under a fresh request id and the
// turn waits for the host's control_response; a denial turns the tool's
// result into the CLI's is_error denial and lists it in the result's
// permission_denials. An interrupt answers at once and ends the turn the
// CLI's way (cancelled prompt, is_error results for tools in flight,
// "[Request interrupted by user…]", an error_during_execution result).
// Once the recorded turns are used up, every turn gets CannedReply.
//
// Control requests from the host are answered like the CLI answers them:
// initialize (the recorded response, followed the first time by the
// events the recording printed before its first turn), interrupt,
// mcp_status (the recorded one), mcp_set_servers (the recorded servers
// stay; others are listed as added and reported failed, as nothing is
// started), mcp_reconnect, mcp_toggle, set_model, set_permission_mode; any
// other subtype gets an error response. A line that is not a JSON object,
// or a user message or control request without its required fields, ends
// Run with an error wrapping ErrBadInput, as the real CLI dies on malformed
// input. The end of stdin finishes the turns already asked for and ends Run
// with nil.
//
// The session loop is the only writer of stdout and owns all state; the
// reader goroutine only parses lines and hands them over.
package replay
