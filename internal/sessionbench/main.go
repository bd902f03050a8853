//go:build linux

// Command sessionbench measures what issue 21 asks of sessions, with the
// real Claude Code CLI against the fake Anthropic API (no network, no
// key), a built ccproxy, and medians of interleaved runs (min–max):
//
//	go run ./internal/sessionbench -scenario start   # new chat → first assistant event, with and without a warm spare, vs a warm turn and vs the CLI alone
//	go run ./internal/sessionbench -scenario idle    # 6 chats idle past --idle-timeout: RSS of ccproxy's process tree; a resumed chat's first event
//	go run ./internal/sessionbench -scenario acp     # ccproxy acp vs the official adapter: session/new → commands; session/new + first chunk
//	go run ./internal/sessionbench -scenario all -runs 7
//
// The CLI is the pinned one the tests use ($CCPROXY_DEPS, or
// $CCPROXY_TEST_CLAUDE). The official ACP adapter
// (@agentclientprotocol/claude-agent-acp) is looked for under -official
// (an npm prefix; default $CCPROXY_ACP_OFFICIAL): install it with
//
//	npm install --prefix DIR @agentclientprotocol/claude-agent-acp@0.101.0
//
// and it runs the same CLI (CLAUDE_CODE_EXECUTABLE) against the same fake
// API. Times are wall-clock on this machine: compare the columns of one
// run of the command, not runs on different machines.
//
// "First assistant event" is the first session/event whose type is
// assistant or stream_event (the first token of the reply).
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// settle is how long the start scenario waits, once the spare is ready,
// before the new chat (and the CLI alone, once claimed, before its first
// turn): 0 opens the chat at once.
var settle = flag.Duration("settle", 0, "start: wait this long after the spare is ready before the new chat")

func main() {
	scenario := flag.String("scenario", "all", "start, idle, acp or all")
	runs := flag.Int("runs", 5, "interleaved runs of each variant")
	official := flag.String("official", os.Getenv("CCPROXY_ACP_OFFICIAL"), "npm prefix where @agentclientprotocol/claude-agent-acp is installed (acp scenario)")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "sessionbench: -runs must be at least 1")
		os.Exit(2)
	}
	env, err := newEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sessionbench:", err)
		os.Exit(1)
	}
	defer env.close()
	fmt.Printf("sessionbench: Claude Code %s, %d runs, %s\n\n", env.claudeVersion, *runs, time.Now().UTC().Format(time.RFC3339))
	var failed bool
	for _, s := range []struct {
		name string
		run  func(*benchEnv, int) error
	}{
		{"start", benchStart},
		{"idle", benchIdle},
		{"acp", func(e *benchEnv, n int) error { return benchACP(e, n, *official) }},
	} {
		if *scenario != "all" && *scenario != s.name {
			continue
		}
		if err := s.run(env, *runs); err != nil {
			fmt.Fprintf(os.Stderr, "sessionbench: %s: %v\n", s.name, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// series is one measured quantity over the runs.
type series struct {
	name string
	unit string // "ms" or "MiB"
	vals []float64
	none int // runs where the awaited thing never came
}

func (s *series) add(v float64) { s.vals = append(s.vals, v) }

func (s *series) durAdd(d time.Duration) { s.add(float64(d) / float64(time.Millisecond)) }

func (s *series) median() float64 {
	v := append([]float64(nil), s.vals...)
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (s *series) String() string {
	none := ""
	if s.none > 0 {
		none = fmt.Sprintf("; never came in %d run(s)", s.none)
	}
	if len(s.vals) == 0 {
		return fmt.Sprintf("%-62s        —     (n=0%s)", s.name, none)
	}
	v := append([]float64(nil), s.vals...)
	sort.Float64s(v)
	return fmt.Sprintf("%-62s %9.1f %-3s (%.1f–%.1f, n=%d%s)", s.name, s.median(), s.unit, v[0], v[len(v)-1], len(v), none)
}

func printTable(title string, rows ...*series) {
	fmt.Println(title)
	fmt.Println(strings.Repeat("-", len(title)))
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Println()
}
