package fakeapi_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
)

func Example() {
	srv := fakeapi.NewServer(fakeapi.First(
		fakeapi.OnText("weather", fakeapi.CallTool("mcp__srv__forecast", map[string]any{"city": "Paris"})),
		fakeapi.OnToolResults(fakeapi.Summarize),
	), nil)
	defer srv.Close()

	body := `{"model":"claude-test","stream":true,"tools":[{"name":"ToolSearch"}],
	          "messages":[{"role":"user","content":"what is the weather?"}]}`
	resp, err := http.Post(srv.URL()+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sse, _ := io.ReadAll(resp.Body)
	var events []string
	for _, line := range strings.Split(string(sse), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, name)
		}
	}
	fmt.Println(strings.Join(events, " "))
	fmt.Println(srv.Requests()[0].Prompt())
	// Output:
	// message_start ping content_block_start content_block_delta content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop
	// what is the weather?
}
