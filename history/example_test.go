package history_test

import (
	"context"
	"fmt"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/stream"
)

// List the sessions of a projects directory, then read the first events of
// the newest one, attachments stripped (a proxy would set a stream.Sink).
func Example() {
	st, err := history.Open(history.Options{Root: "../testdata/history/2.1.330/projects"})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	list, err := st.List(ctx, history.ListOptions{Limit: 10})
	if err != nil {
		panic(err)
	}
	for _, s := range list.Sessions {
		fmt.Printf("%s: %q (%s), %d messages\n", s.Project, s.Title, s.TitleFrom, s.Messages)
	}
	page, err := st.Read(ctx, history.ReadOptions{ID: list.Sessions[0].ID, Limit: 3,
		Normalize: stream.Options{Attachments: stream.AttachStrip}})
	if err != nil {
		panic(err)
	}
	for _, ev := range page.Events {
		fmt.Println(ev.Type, "at byte", ev.Offset)
	}
	fmt.Println("more:", page.More, "skipped:", page.Skipped)
	// Output:
	// /tmp/cchist/project: "[H-TEXT] Say hello, after some thought." (prompt), 29 messages
	// user at byte 330
	// assistant at byte 92429
	// assistant at byte 93725
	// more: true skipped: 17
}
