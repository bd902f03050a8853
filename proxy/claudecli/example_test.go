package claudecli_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/stream"
)

// A small Go client of Claude Code's stream-json control protocol: start
// claude, initialize it, answer its permission prompts, send a turn and
// read the turn's events until its result. (In this test, $CCPROXY_CLAUDE
// names an impersonation of the CLI made by TestMain.)
func Example() {
	ctx := context.Background()
	found, err := claudecli.FindClaude(ctx, "", os.Getenv, "")
	if err != nil {
		log.Fatal(err)
	}
	events := make(chan string, 16)
	c, err := claudecli.Start(claudecli.Config{
		Path: found.Path,
		Args: []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json",
			"--verbose", "--permission-prompt-tool", "stdio"},
		OnEvent: func(ev *stream.Event) {
			events <- strings.TrimSpace(ev.Type + " " + ev.Subtype) // ev is valid only during the call
		},
		OnControlRequest: func(c *claudecli.Client, req claudecli.ControlRequest) {
			if req.Subtype == "can_use_tool" {
				answer, _ := stream.ControlSuccess(req.ID, map[string]any{"behavior": "deny", "message": "not in this example"})
				c.Answer(answer)
				return
			}
			c.Answer(stream.ControlError(req.ID, "not supported"))
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Call(ctx, "initialize", map[string]any{"hooks": nil}); err != nil {
		log.Fatal(err)
	}
	turn, _ := stream.UserTurn("hello", nil)
	if err := c.Send(ctx, turn); err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		fmt.Println(ev)
		if ev == "result success" {
			break
		}
	}
	c.Close() // stdin EOF: claude ends by itself
	fmt.Println("exit code", *c.Exit().Code)
	// Output:
	// system init
	// assistant
	// result success
	// exit code 0
}
