package replay_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/replay"
	"github.com/ccproxy/ccproxy/stream"
)

// One user turn on stdin, then the end of stdin: the replayer plays the
// demo's first recorded turn and returns.
func Example() {
	t, err := replay.Demo()
	if err != nil {
		panic(err)
	}
	r, err := replay.New(t, replay.Options{Speed: 0, ReplayUserMessages: true})
	if err != nil {
		panic(err)
	}
	turn, err := stream.UserTurn("Hi!", nil) // what the proxy writes for a turn
	if err != nil {
		panic(err)
	}
	stdin := bytes.NewReader(turn)
	var stdout bytes.Buffer
	if err := r.Run(context.Background(), stdin, &stdout); err != nil {
		panic(err)
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev := gjson.ParseBytes(sc.Bytes())
		switch ev.Get("type").Str {
		case "user":
			fmt.Println("user:", ev.Get("message.content").Str)
		case "assistant":
			fmt.Println("assistant:", ev.Get("message.content.0.type").Str)
		default:
			fmt.Println(ev.Get("type").Str + "/" + ev.Get("subtype").Str)
		}
	}
	// Output:
	// system/init
	// system/status
	// user: Hi!
	// assistant: thinking
	// assistant: text
	// result/success
}
