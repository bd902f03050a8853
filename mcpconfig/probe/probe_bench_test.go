//go:build unix

package probe

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// BenchmarkProbeConcurrent probes 20 stdio servers at once (ProbeAll with
// Concurrency 20) and compares the time with that of the slowest of the
// same 20 probed one at a time: "ratio" must stay under 2. Each probe
// starts a process, initializes, lists tools and resources, closes and
// waits until the process group is gone.
//
//   - ready-after-200ms: servers that take 200 ms to get ready (the fake
//     server of probe_main_test.go serving the go-sdk test server after a
//     sleep), as servers that open a database or a connection do: the
//     probes' waits overlap.
//   - go-sdk-test-server: the test server itself, ready in a few
//     milliseconds of CPU. The probes are then CPU-bound, and 20 of them
//     need 20 × (self-cpu-ms + server-cpu-ms) of CPU: on a 2-core machine
//     the ratio reflects the cores, not the prober (reported for the
//     record, with the CPU figures that explain it).
func BenchmarkProbeConcurrent(b *testing.B) {
	b.Run("ready-after-200ms", func(b *testing.B) {
		benchProbeConcurrent(b, func(testing.TB) map[string]any {
			return fake(b, fakeSlowStart, map[string]string{"FAKE_DELAY_MS": "200"})
		})
	})
	b.Run("go-sdk-test-server", func(b *testing.B) {
		benchProbeConcurrent(b, func(tb testing.TB) map[string]any { return stdio(mcptest.Command(tb)) })
	})
}

func benchProbeConcurrent(b *testing.B, def func(testing.TB) map[string]any) {
	const n = 20
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%02d", i)] = def(b)
	}
	cfg := probeConfig(b, servers, nil)
	p := NewProber(ProberOptions{Concurrency: n, Timeout: time.Minute, Env: func(string) (string, bool) { return "", false }})
	ctx := context.Background()
	probeOne := func(i int) time.Duration {
		start := time.Now()
		if r := p.ProbeServer(ctx, &cfg.Servers[i]); !r.OK {
			b.Fatalf("%s: %+v", r.Name, r.Error)
		}
		return time.Since(start)
	}
	probeOne(0) // warm the page cache
	var slowest time.Duration
	for i := range n {
		slowest = max(slowest, probeOne(i))
	}
	var self0, kids0, self1, kids1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids0)
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		for _, r := range p.ProbeAll(ctx, cfg) {
			if !r.OK {
				b.Fatalf("%s: %+v", r.Name, r.Error)
			}
		}
		total += time.Since(start)
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids1)
	probes := float64(b.N * n)
	cpuMs := func(a, z syscall.Rusage) float64 {
		return float64((z.Utime.Nano()+z.Stime.Nano())-(a.Utime.Nano()+a.Stime.Nano())) / 1e6 / probes
	}
	all := total / time.Duration(b.N)
	b.ReportMetric(float64(slowest.Microseconds())/1000, "slowest-single-ms")
	b.ReportMetric(float64(all.Microseconds())/1000, "all-20-ms")
	b.ReportMetric(float64(all)/float64(slowest), "ratio")
	b.ReportMetric(cpuMs(self0, self1), "self-cpu-ms/probe")
	b.ReportMetric(cpuMs(kids0, kids1), "server-cpu-ms/probe")
}
