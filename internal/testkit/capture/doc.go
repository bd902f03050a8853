// Package capture records real Claude Code CLI sessions — the transcripts
// ccproxy's golden tests are made from — reproducibly, and checks them.
//
// A Scenario is a scripted session: the user turns to send, a fakeapi
// Responder playing the model, whether to ask for partial messages, and what
// the capture must show (the tools called, a check per tool, a check over the
// whole transcript). Run makes a fresh HOME and project directory, starts the
// fake API, writes an --mcp-config with the npm server-everything and
// ccproxy-testmcp, and starts
//
//	claude -p --input-format stream-json --output-format stream-json --verbose
//	       [--include-partial-messages] --mcp-config F --strict-mcp-config
//	       --allowedTools mcp__everything mcp__testmcp
//
// in its own process group. It writes the turns on stdin (logged with
// timestamps to <scenario>.stdin.log), waits for each turn's result event,
// closes stdin, waits for the exit, notes any process of the group still
// alive, and kills the group. Stdout streams to <scenario>.jsonl (or
// .jsonl.gz); only lines up to 1 MiB are inspected on the way, so memory stays
// bounded whatever the CLI prints.
//
// ReadTranscript parses a capture back — events, tool calls paired with
// their results by tool_use_id, result events — and Verify checks it against
// its scenario. The command internal/testkit/cmd/capture runs all scenarios
// into testdata/transcripts/captured; TestCaptureRealCLI runs them into a
// temp dir against the real CLI in CI.
package capture
