//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// benchACP: `ccproxy acp` against the official adapter
// (@agentclientprotocol/claude-agent-acp), the same client (this one, the
// Go ACP SDK), the same CLI and fake API. Two measures, each on a fresh
// agent process after initialize: session/new sent → the first
// available_commands_update (waiting up to 20 s, no prompt sent), and
// session/new sent → the first agent_message_chunk of a prompt sent as
// soon as session/new answers.
func benchACP(e *benchEnv, runs int, official string) error {
	type agent struct {
		name     string
		commands *series
		chunk    *series
		newAns   *series
		late     *series
		cmd      func(project string, env []string) *exec.Cmd
	}
	agents := []*agent{{name: "ccproxy acp", cmd: func(project string, env []string) *exec.Cmd {
		c := exec.Command(e.ccproxy, "acp", "--claude", e.claude, "--project", project, "--log-level", "warn")
		c.Env = append(env, "CCPROXY_TOKEN=")
		return c
	}}}
	if official == "" {
		fmt.Println("acp: no -official (or $CCPROXY_ACP_OFFICIAL): the official adapter is not measured")
	} else {
		entry := filepath.Join(official, "node_modules", "@agentclientprotocol", "claude-agent-acp", "dist", "index.js")
		if _, err := os.Stat(entry); err != nil {
			return fmt.Errorf("the official adapter: %w (npm install --prefix %s @agentclientprotocol/claude-agent-acp@0.101.0)", err, official)
		}
		agents = append(agents, &agent{name: "claude-agent-acp", cmd: func(project string, env []string) *exec.Cmd {
			c := exec.Command("node", entry)
			c.Env = append(env, "CLAUDE_CODE_EXECUTABLE="+e.claude)
			c.Dir = project
			return c
		}})
	}
	for _, a := range agents {
		a.newAns = &series{name: a.name + ": session/new answered", unit: "ms"}
		a.commands = &series{name: a.name + ": session/new → available_commands_update", unit: "ms"}
		a.chunk = &series{name: a.name + ": session/new + prompt → first chunk", unit: "ms"}
		a.late = &series{name: a.name + ": session/new + prompt → available_commands_update", unit: "ms"}
	}
	for i := 0; i < runs; i++ {
		for _, a := range agents {
			if err := acpRun(e, a.cmd, a.newAns, a.commands, nil, false); err != nil {
				return fmt.Errorf("%s: %w", a.name, err)
			}
			if err := acpRun(e, a.cmd, nil, a.chunk, a.late, true); err != nil {
				return fmt.Errorf("%s: %w", a.name, err)
			}
		}
	}
	var rows []*series
	for _, a := range agents {
		rows = append(rows, a.newAns, a.commands, a.chunk, a.late)
	}
	printTable("ACP: ccproxy acp against the official adapter (same client, CLI and fake API)", rows...)
	return nil
}

// acpRun starts an agent, initializes it and opens a session; without
// prompt it records session/new's answer in newAns and the time to the
// first commands update in out (counted as never when none comes within
// 20 s), with prompt it sends one as soon as session/new answers and
// records the time to the first chunk, and in late the time to the first
// commands update by the end of the turn.
func acpRun(e *benchEnv, mk func(string, []string) *exec.Cmd, newAns, out, late *series, prompt bool) error {
	_, project, env, err := e.home()
	if err != nil {
		return err
	}
	cmd := mk(project, env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = nil // the agents' logs are not the bench's
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}()
	cl := &benchClient{commands: make(chan time.Time, 1), chunk: make(chan time.Time, 1)}
	conn := sdk.NewClientSideConnection(cl, stdin, stdout)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	t0 := time.Now()
	ns, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: project, McpServers: []sdk.McpServer{}})
	if err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	if newAns != nil {
		newAns.durAdd(time.Since(t0))
	}
	if !prompt {
		select {
		case at := <-cl.commands:
			out.durAdd(at.Sub(t0))
			return nil
		case <-time.After(20 * time.Second):
			out.none++ // none before a prompt
			return nil
		}
	}
	perr := make(chan error, 1)
	go func() {
		_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hello")}})
		perr <- err
	}()
	select {
	case at := <-cl.chunk:
		out.durAdd(at.Sub(t0))
	case err := <-perr:
		return fmt.Errorf("the prompt ended with no chunk: %v", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := <-perr; err != nil {
		return err
	}
	select {
	case at := <-cl.commands:
		late.durAdd(at.Sub(t0))
	default:
		late.none++
	}
	return nil
}

// benchClient is the editor's side: it records when the first commands
// update and the first message chunk arrive, and answers nothing else.
type benchClient struct {
	once1, once2    sync.Once
	commands, chunk chan time.Time
}

func (c *benchClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	now := time.Now()
	if n.Update.AvailableCommandsUpdate != nil {
		c.once1.Do(func() { c.commands <- now })
	}
	if n.Update.AgentMessageChunk != nil {
		c.once2.Do(func() { c.chunk <- now })
	}
	return nil
}

var errNotOffered = errors.New("sessionbench: not offered by this client")

func (c *benchClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNotOffered
}

func (c *benchClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNotOffered
}

func (c *benchClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *benchClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNotOffered
}

func (c *benchClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNotOffered
}

func (c *benchClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNotOffered
}

func (c *benchClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNotOffered
}

func (c *benchClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNotOffered
}

func (c *benchClient) UnstableCompleteElicitation(context.Context, sdk.UnstableCompleteElicitationNotification) error {
	return errNotOffered
}

func (c *benchClient) UnstableCreateElicitation(context.Context, sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	return sdk.UnstableCreateElicitationResponse{}, errNotOffered
}
