//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// benchStart: a new chat (dial, session/create, subscribe, send) to its
// first assistant event, with no spare (--warm 0) and with one (--warm 1,
// measured once the spare is ready, as a user opening a chat a while after
// serve started finds it; the spare is then claimed ahead for the
// project), against a warm turn's send → first assistant event in the same
// chat, and against the CLI alone used the same way (cliRun): its first and
// second turn after a claim.
func benchStart(e *benchEnv, runs int) error {
	cold := &series{name: "new chat → first assistant event, --warm 0", unit: "ms"}
	warm := &series{name: "new chat → first assistant event, --warm 1", unit: "ms"}
	coldCreate := &series{name: "  of which dial, session/create, subscribe, --warm 0", unit: "ms"}
	warmCreate := &series{name: "  of which dial, session/create, subscribe, --warm 1", unit: "ms"}
	turn := &series{name: "warm turn: send → first assistant event", unit: "ms"}
	cliFirst := &series{name: "the CLI alone, claimed: first turn → first assistant event", unit: "ms"}
	cliSecond := &series{name: "the CLI alone, claimed: second turn → first assistant event", unit: "ms"}
	for i := 0; i < runs; i++ {
		if err := cliRun(e, cliFirst, cliSecond); err != nil {
			return fmt.Errorf("the CLI alone: %w", err)
		}
		for _, v := range []struct {
			warm      string
			s, create *series
		}{{"0", cold, coldCreate}, {"1", warm, warmCreate}} {
			if err := startRun(e, v.warm, v.s, v.create, turn); err != nil {
				return fmt.Errorf("--warm %s: %w", v.warm, err)
			}
		}
	}
	printTable("Start: a new chat against a warm turn (same CLI, same fake API)", cold, coldCreate, warm, warmCreate, turn, cliFirst, cliSecond)
	fmt.Printf("ratio new chat (--warm 1) / warm turn: %.2f×; without a spare: %.2f×\n", warm.median()/turn.median(), cold.median()/turn.median())
	fmt.Printf("the CLI alone: first turn / second turn after a claim: %.2f×; new chat (--warm 1) less the CLI's first turn: %+.1f ms\n\n",
		cliFirst.median()/cliSecond.median(), warm.median()-cliFirst.median())
	return nil
}

func startRun(e *benchEnv, warmN string, newChat, create, turn *series) error {
	s, err := e.serve("--warm", warmN)
	if err != nil {
		return err
	}
	defer s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if warmN != "0" {
		// ccproxy_spares counts a spare once it has booted (it answered
		// the pool's probe): as when a user opens a chat a while after
		// serve started.
		if err := s.waitMetric(ctx, "ccproxy_spares", 1); err != nil {
			return err
		}
		time.Sleep(*settle) // -settle: the user opens the chat that long after
	}
	t0 := time.Now()
	ch, err := s.newChat(ctx)
	if err != nil {
		return err
	}
	defer ch.close()
	create.durAdd(time.Since(t0))
	first, err := ch.turn(ctx, "hello")
	if err != nil {
		return err
	}
	newChat.durAdd(first.Sub(t0))
	sent := time.Now()
	first, err = ch.turn(ctx, "and again")
	if err != nil {
		return err
	}
	turn.durAdd(first.Sub(sent))
	return nil
}

// waitMetric polls /metrics (every 50 ms) until the gauge name reads at
// least want.
func (s *served) waitMetric(ctx context.Context, name string, want float64) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+s.token)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, l := range strings.Split(string(b), "\n") {
				var v float64
				if rest, ok := strings.CutPrefix(l, name+" "); ok {
					if _, err := fmt.Sscan(rest, &v); err == nil && v >= want {
						return nil
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s ≥ %v on /metrics: %w", name, want, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// benchIdle: six chats with one turn each, then idle past --idle-timeout
// (2 s here; suspended) or never suspended (--idle-timeout 0, as serve was
// before): the resident memory of ccproxy's whole process tree (the spare
// included), and the first event of a turn in a chat that was suspended.
func benchIdle(e *benchEnv, runs int) error {
	never := &series{name: "6 idle chats, --idle-timeout 0: RSS of the process tree", unit: "MiB"}
	susp := &series{name: "6 idle chats, suspended (--idle-timeout 2s): RSS of the tree", unit: "MiB"}
	resumed := &series{name: "resumed chat: send → first assistant event", unit: "ms"}
	live := &series{name: "live chat (never suspended): send → first assistant event", unit: "ms"}
	for i := 0; i < runs; i++ {
		if err := idleRun(e, "0", never, live); err != nil {
			return fmt.Errorf("--idle-timeout 0: %w", err)
		}
		if err := idleRun(e, "2s", susp, resumed); err != nil {
			return fmt.Errorf("--idle-timeout 2s: %w", err)
		}
	}
	printTable("Idle: six chats after one turn each (default --warm 1: the spare is counted)", never, susp, live, resumed)
	return nil
}

func idleRun(e *benchEnv, timeout string, rss, next *series) error {
	s, err := e.serve("--idle-timeout", timeout)
	if err != nil {
		return err
	}
	defer s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var chats []*chat
	defer func() {
		for _, ch := range chats {
			ch.close()
		}
	}()
	for i := 0; i < 6; i++ {
		ch, err := s.newChat(ctx)
		if err != nil {
			return err
		}
		chats = append(chats, ch)
		if _, err := ch.turn(ctx, fmt.Sprintf("hello %d", i)); err != nil {
			return err
		}
	}
	if timeout == "0" {
		// Nothing will change: measured after the time the other variant
		// waits for its suspends, so both have settled as long.
		time.Sleep(3 * time.Second)
	} else {
		for _, ch := range chats {
			if err := ch.waitState(ctx, "suspended"); err != nil {
				return err
			}
		}
		time.Sleep(time.Second) // the stopped processes' memory returned
	}
	mib, err := treeRSS(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	rss.add(mib)
	sent := time.Now()
	first, err := chats[0].turn(ctx, "are you still there?")
	if err != nil {
		return err
	}
	next.durAdd(first.Sub(sent))
	return nil
}
