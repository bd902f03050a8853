//go:build linux

package main

import (
	"context"
	"errors"
	"time"

	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/stream"
)

// cliRun measures the CLI alone, without ccproxy, as the spare ccproxy
// claims ahead of need is used: claude started with --await-claim, booted
// (it answers mcp_status), claimed for a project (claim_session), then,
// once idle, a first turn and a second: each send → its first assistant
// event. It is what a new chat on the spare claimed ahead costs at the
// CLI, whatever ccproxy does; claude gets the flags ccproxy gives it
// (claudecli.StreamArgs), which change what a turn does.
func cliRun(e *benchEnv, first, second *series) error {
	home, project, env, err := e.home()
	if err != nil {
		return err
	}
	evs := make(chan *stream.Event, 4096)
	cli, err := claudecli.Start(claudecli.Config{Path: e.claude, Dir: home, Env: env, ControlTimeout: time.Minute,
		Args:    append(claudecli.StreamArgs(), "--await-claim"), // as ccproxy starts a spare, less its MCP flags
		OnEvent: func(ev *stream.Event) { evs <- ev.Clone() }})
	if err != nil {
		return err
	}
	defer func() { cli.Close(); cli.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := cli.Call(ctx, "mcp_status", nil); err != nil {
		return err
	}
	if _, err := cli.Call(ctx, "claim_session", map[string]any{"cwd": project, "include_initialize": true}); err != nil {
		return err
	}
	time.Sleep(*settle)
	turn := func() (time.Duration, error) {
		t0 := time.Now()
		if err := cli.SendAsync([]byte(`{"type":"user","message":{"role":"user","content":"hello"}}` + "\n")); err != nil {
			return 0, err
		}
		var d time.Duration
		for {
			select {
			case ev := <-evs:
				if d == 0 && (ev.Type == stream.TypeAssistant || ev.Type == stream.TypeStreamEvent) {
					d = time.Since(t0)
				}
				if ev.Type == stream.TypeResult {
					if d == 0 {
						return 0, errors.New("the turn ended with no assistant output")
					}
					return d, nil
				}
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
	}
	for _, s := range []*series{first, second} {
		d, err := turn()
		if err != nil {
			return err
		}
		s.durAdd(d)
	}
	return nil
}
