package proxy

// Warm spares in `serve` (Options.WarmSpares, serve --warm): the pool of
// package proxy/spare, launched as this server launches claude, and the
// choice createSession makes between a spare and a spawn (SPEC §5
// session/create, "Warm spares"). The pool is a component of its own
// (lifecycle.go: opened after the sessions, so closed before them).

import (
	"context"
	"encoding/json"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/spare"
	"github.com/ccproxy/ccproxy/stream"
)

// newSparePool returns the server's pool of spares: WarmSpares of them,
// none for a replay (the demo runs no real CLI).
func newSparePool(s *Server) *spare.Pool {
	n := s.opts.WarmSpares
	if s.opts.Replay != "" {
		n = 0
	}
	return spare.New(spare.Config{
		N:            n,
		Launch:       func(sp *spare.Spare) (*claudecli.Client, any, func(), error) { return launchSpare(s, sp) },
		Current:      func() any { return s.mcp.Config() },
		Ahead:        func() *spare.Claim { c := projectClaim(s); return &c },
		BeforeLaunch: s.opts.beforeSpare,
		Log:          s.log.With("component", "spares"),
	})
}

// launchSpare starts one spare of s: claude as a session would start it with
// no model, mode or resume, plus --await-claim, with the MCP configuration
// of its tag (the one in force), parked in the project directory. Its
// data is the servers of its --mcp-config (claudeProc.mcpLaunched).
func launchSpare(s *Server, sp *spare.Spare) (*claudecli.Client, any, func(), error) {
	claude, err := s.findClaude()
	if err != nil {
		return nil, nil, nil, err
	}
	mcpArgs := []string{"--await-claim"}
	var launched map[string]bool
	release := func() {}
	if cfg, _ := sp.Tag.(*mcphub.Config); cfg != nil && cfg.Spawn != nil {
		args, rel, err := cfg.Spawn()
		if err != nil {
			return nil, nil, nil, err
		}
		mcpArgs = append(mcpArgs, args...)
		if rel != nil {
			release = rel
		}
		launched = make(map[string]bool, len(cfg.Servers))
		for name := range cfg.Servers {
			launched[name] = true
		}
	}
	onEvent, onRequest, onCancel := sp.Handlers()
	o := s.opts
	cli, err := claudecli.Start(claudecli.Config{
		Path:             claude.Path,
		Args:             claudeArgs(o.ClaudePrefixArgs, "", "", "", nil, mcpArgs),
		Dir:              o.Project,
		Env:              s.opts.sessionClaudeEnv(), // a session's, as a spawned claude's: a claimed spare is one
		Stream:           stream.Options{Attachments: stream.AttachSink, Sink: s.blobs},
		MaxLineBytes:     o.MaxLineBytes,
		StderrTailBytes:  o.StderrTailBytes,
		StdinQueue:       stdinQueue,
		ControlTimeout:   o.ControlTimeout,
		CloseGrace:       o.CloseGrace,
		TermGrace:        o.TermGrace,
		OnEvent:          onEvent,
		OnControlRequest: onRequest,
		OnControlCancel:  onCancel,
		OnNormalized:     s.metrics.Normalized,
		OnControlDone:    s.metrics.ControlDone,
		Logger:           s.log.With("component", "spares"),
	})
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	return cli, launched, release, nil
}

// projectClaim is the claim of a session created with no cwd and no
// permission mode: the project directory, claude's default mode. One spare
// is claimed for it ahead of need (spare.Config.Ahead), so that such a
// session's first turn pays neither the claim nor the CLI's first claim
// work (docs/CLI-NOTES.md, "Spares").
func projectClaim(s *Server) spare.Claim { return spare.Claim{Cwd: s.opts.Project} }

// spareFits reports whether a session created with d may run a spare:
// what a claim cannot set (a model, a resume or fork, servers of the
// client's own, bypassPermissions) needs a claude spawned for it.
func spareFits(d *protocol.SessionCreate, cfg sessionConfig) bool {
	return d.Model == "" && d.Resume == "" && !d.Fork && cfg.client == nil && d.PermissionMode != protocol.PermissionModeBypass
}

// startClaude starts the claude of a new session: a parked spare when one
// fits, claimed for its cwd and mode (claimed is then the initialize answer
// its claim carried, for Session.run), else a spawn as
// always. A claim that fails (refused, no answer in ControlTimeout, the
// spare gone, the pool closing) is logged and falls back to a spawn.
func (s *Server) startClaude(sess *Session, claude Claude, d *protocol.SessionCreate) (p *claudeProc, claimed json.RawMessage, err error) {
	if s.opts.WarmSpares > 0 && s.opts.Replay == "" {
		if !spareFits(d, sess.cfg) {
			s.spares.Skip()
		} else if p, claimed, err = s.takeSpare(sess, sessionClaim(sess)); err == nil && p != nil {
			return p, claimed, nil
		}
	}
	p, err = sess.spawn(claude, d.Resume)
	return p, nil, err
}

// takeSpare runs sess on a spare fit for want, if one is parked: nil
// when none is, an error when the one taken did not take the session (it
// is then stopped, counted and logged; the caller spawns claude).
func (s *Server) takeSpare(sess *Session, want spare.Claim) (*claudeProc, json.RawMessage, error) {
	sp := s.spares.Take(s.mcp.Config(), want)
	if sp == nil {
		return nil, nil, nil
	}
	ctx, cancel := context.WithTimeout(s.spares.Context(), s.opts.ControlTimeout)
	defer cancel()
	p, claimed, err := claimSpare(ctx, sess, sp, want)
	if err != nil {
		s.spares.Refused()
		sess.log.Warn("the spare claude did not take the session; starting claude as usual", "pid", sp.Cli.PID(), "cwd", sess.cfg.cwd, "err", err)
		sp.Cli.Kill()
		sp.Cli.Wait()
		sp.Release()
	}
	return p, claimed, err
}
