package spare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ccproxy/ccproxy/proxy/claudecli"
)

// Defaults of Config.
const (
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = time.Minute
)

// Config configures a Pool.
type Config struct {
	// N is how many spares are kept parked (0: none; the pool then only
	// counts Skip).
	N int
	// Launch starts one spare: a claude with --await-claim whose
	// claudecli.Config takes sp.Handlers(). It returns the client, what
	// the taker needs to know of it (Spare.Data) and what frees what its
	// command line names once it has exited (nil: nothing).
	Launch func(sp *Spare) (cli *claudecli.Client, data any, release func(), err error)
	// Current returns what a spare launched now would be launched with
	// (compared with ==): a parked spare whose Tag differs is stale,
	// closed and replaced by the owner after Refresh, and never taken.
	Current func() any
	// Backoff is the wait before launching again after a spare exited by
	// itself or could not start, doubled at each failure in a row up to
	// MaxBackoff (DefaultBackoff, DefaultMaxBackoff when <= 0).
	Backoff, MaxBackoff time.Duration
	// Ahead, when set, returns the claim to make ahead of need (nil:
	// none): once booted, one spare at a time is claimed for it and
	// parked claimed, its output held (bounded) until a session whose
	// claim it is takes it (Spare.Ahead, Spare.Adopt). The others stay
	// parked for any claim. A refusal leaves the spare parked unclaimed.
	Ahead func() *Claim
	// BeforeLaunch, when set (tests), is called by the owner just before
	// each launch.
	BeforeLaunch func()
	// Log receives the pool's log (discarded when nil).
	Log *slog.Logger
}

// Pool keeps Config.N spares parked; see the package documentation.
type Pool struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	kick   chan struct{} // capacity 1: the owner has something to do
	wg     sync.WaitGroup
	open   sync.Once
	stop   sync.Once

	mu       sync.Mutex
	ready    []*Spare
	closed   bool
	failures int           // spares in a row that exited by themselves or did not start
	changed  chan struct{} // closed and replaced whenever ready changes (Changed)
	counts   counts
}

// counts are the pool's counters (Collector).
type counts struct {
	taken, takenStarting, takenAhead, none, aheadOther, unfit, refused, launched, failed, replaced int64
}

// New returns a pool; Open starts it.
func New(cfg Config) *Pool {
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{cfg: cfg, log: log, ctx: ctx, cancel: cancel, kick: make(chan struct{}, 1), changed: make(chan struct{})}
}

// Open starts the owner goroutine (once; not with N 0).
func (p *Pool) Open() {
	if p.cfg.N <= 0 {
		return
	}
	p.open.Do(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.closed {
			return
		}
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.run() }()
	})
}

// Close stops the pool: no spare is taken or launched any more, a claim
// under way is cancelled, every parked spare is closed. It waits for all
// of it and may be called more than once.
func (p *Pool) Close(context.Context) error {
	p.stop.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cancel()
	})
	p.wg.Wait()
	return nil
}

// Context is done once the pool closes: a claim of a spare it handed out
// is made under it.
func (p *Pool) Context() context.Context { return p.ctx }

// Refresh tells the owner that Current may have changed: stale spares are
// replaced. It never blocks.
func (p *Pool) Refresh() { p.poke() }

func (p *Pool) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Take hands out a parked spare launched with tag for a session that would
// claim want, if one is (the caller then owns it: it adopts a spare claimed
// ahead of need, claims any other, or closes it), and has the owner launch
// its replacement. In order of preference: one claimed ahead for want
// (its claim answered, then still under way), a booted one, one still
// starting (its claim is answered once it has started, which is never
// later than a claude spawned now). A spare claimed ahead for another
// claim is never handed out. Nil when none is, or the pool is closed.
func (p *Pool) Take(tag any, want Claim) *Spare {
	if p.cfg.N <= 0 {
		return nil
	}
	sp, next := p.take(tag, want)
	if next != nil {
		p.claimAhead(next) // never blocks: CallAsync; its answer comes on next's stdout goroutine
	}
	return sp
}

// take is Take under Pool.mu; next is a parked spare to claim ahead now
// that the one claimed ahead was taken.
func (p *Pool) take(tag any, want Claim) (sp, next *Spare) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil
	}
	pick, best, other := -1, 0, false
	for i, sp := range p.ready {
		if sp.Tag != tag || sp.broken {
			continue
		}
		rank := 0 // still starting
		switch {
		case sp.ahead != nil && !sameClaim(*sp.ahead, want):
			other = true
			continue
		case sp.ahead != nil && sp.booted:
			rank = 3
		case sp.ahead != nil:
			rank = 2
		case sp.booted:
			rank = 1
		}
		if pick < 0 || rank > best {
			pick, best = i, rank
		}
	}
	if pick < 0 {
		if other {
			p.counts.aheadOther++
		} else {
			p.counts.none++
		}
		p.poke()
		return nil, nil
	}
	sp = p.ready[pick]
	p.ready = append(p.ready[:pick], p.ready[pick+1:]...)
	close(sp.taken)
	switch {
	case sp.ahead != nil:
		p.counts.takenAhead++
	case sp.booted:
		p.counts.taken++
	default:
		p.counts.takenStarting++
	}
	p.failures = 0
	p.changedLocked()
	p.poke()
	return sp, p.nextAheadLocked()
}

// Skip counts a session that could not use a spare (it needs what no
// spare is launched with).
func (p *Pool) Skip() {
	p.mu.Lock()
	p.counts.unfit++
	p.mu.Unlock()
}

// Refused counts a spare taken whose claim failed (the taker closes it
// and starts claude as usual).
func (p *Pool) Refused() {
	p.mu.Lock()
	p.counts.refused++
	p.mu.Unlock()
}

// Ready is how many parked spares have booted (a claim is answered at
// once); Parked counts the ones still starting too.
func (p *Pool) Ready() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	booted, _ := p.bootedLocked()
	return booted
}

// bootedLocked counts the parked spares that have booted and the ones
// still starting.
func (p *Pool) bootedLocked() (booted, starting int) {
	for _, sp := range p.ready {
		if sp.booted && !sp.broken {
			booted++
		}
	}
	return booted, len(p.ready) - booted
}

// Parked is how many spares are parked, booted or still starting.
func (p *Pool) Parked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// Changed returns a channel closed the next time the parked spares change
// (tests wait on it instead of sleeping).
func (p *Pool) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

func (p *Pool) changedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// run is the owner goroutine: it keeps N spares of the current tag
// parked, closes stale ones, and backs off after failures.
func (p *Pool) run() {
	defer p.closeAll()
	for {
		cur := p.cfg.Current()
		p.mu.Lock()
		var stale []*Spare
		var broken []bool // per stale spare, read under mu: a claim's answer may still write it
		keep := p.ready[:0]
		for _, sp := range p.ready {
			switch {
			case sp.broken: // its claim ahead went unanswered: a failure
				p.failures++
				p.counts.failed++
			case sp.Tag != cur:
				p.counts.replaced++
			default:
				keep = append(keep, sp)
				continue
			}
			stale = append(stale, sp)
			broken = append(broken, sp.broken)
			close(sp.taken) // its watcher ends; the owner closes it
		}
		clear(p.ready[len(keep):])
		p.ready = keep
		need := p.cfg.N - len(p.ready)
		failures := p.failures
		if len(stale) > 0 {
			p.changedLocked()
		}
		p.mu.Unlock()
		for i, sp := range stale {
			if broken[i] {
				p.log.Info("closing a spare whose claim ahead of need went unanswered", "pid", sp.Cli.PID())
			} else {
				p.log.Info("closing a spare launched with an older configuration", "pid", sp.Cli.PID())
			}
			sp.Close()
		}
		if need <= 0 {
			select {
			case <-p.kick:
				continue
			case <-p.ctx.Done():
				return
			}
		}
		if failures > 0 && !p.wait(p.backoff(failures)) {
			return
		}
		if p.ctx.Err() != nil {
			return
		}
		p.launch(cur)
	}
}

// backoff is the wait after n failures in a row.
func (p *Pool) backoff(n int) time.Duration {
	d := p.cfg.Backoff
	for i := 1; i < n && d < p.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.cfg.MaxBackoff)
}

// wait waits d, or until the pool closes (false).
func (p *Pool) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// launch starts one spare tagged tag and parks it with its watcher.
func (p *Pool) launch(tag any) {
	if p.cfg.BeforeLaunch != nil {
		p.cfg.BeforeLaunch()
	}
	sp := &Spare{Tag: tag, taken: make(chan struct{}), launched: time.Now()}
	cli, data, release, err := p.cfg.Launch(sp)
	if err != nil {
		p.mu.Lock()
		p.failures++
		p.counts.failed++
		n := p.failures
		p.mu.Unlock()
		p.log.Warn("a spare claude could not start; trying again later", "err", err, "failures", n, "retry_in", p.backoff(n))
		return
	}
	sp.Cli, sp.Data, sp.release = cli, data, release
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		sp.Close()
		return
	}
	p.counts.launched++
	p.ready = append(p.ready, sp)
	p.changedLocked()
	p.wg.Add(1)
	p.mu.Unlock()
	p.log.Info("spare claude parked", "pid", cli.PID())
	go func() { defer p.wg.Done(); p.watch(sp) }()
	p.probe(sp)
}

// probe asks a parked spare a control request that changes nothing
// (mcp_status, answered while parked: docs/CLI-NOTES.md): claude reads
// stdin only once it has started, so its answer, success or refusal, marks
// the spare booted. A probe that times out (a loaded machine) is sent
// again while the spare is parked; one whose spare was taken meanwhile is
// harmless (its answer goes to no one but this callback).
func (p *Pool) probe(sp *Spare) {
	sent := time.Now()
	sp.Cli.CallAsync("mcp_status", nil, func(_ json.RawMessage, err error) {
		var refused *claudecli.CLIError
		answered := err == nil || errors.As(err, &refused)
		p.mu.Lock()
		parked := slices.Contains(p.ready, sp)
		ahead := false
		if answered {
			if parked && p.nextAheadLocked() == sp {
				ahead = true // booted once the claim is answered
			} else if sp.aheadDone == nil { // else the claim made ahead, under way, marks it
				sp.booted = true
				if parked {
					p.changedLocked()
				}
			}
		}
		p.mu.Unlock()
		switch {
		case ahead:
			p.log.Debug("spare claude booted; claiming it ahead of need", "pid", sp.Cli.PID(), "after", time.Since(sent).Round(time.Millisecond))
			p.claimAhead(sp)
		case answered:
			p.log.Debug("spare claude booted", "pid", sp.Cli.PID(), "after", time.Since(sent).Round(time.Millisecond))
		case parked && errors.Is(err, claudecli.ErrTimeout):
			p.probe(sp) // on the timer's goroutine: CallAsync never blocks
		}
	})
}

// nextAheadLocked returns the parked spare to claim ahead of need, if one
// is to be: with Config.Ahead and no parked spare claimed ahead (or being
// claimed), the first parked one never claimed ahead. Nil otherwise.
func (p *Pool) nextAheadLocked() *Spare {
	if p.cfg.Ahead == nil || p.closed {
		return nil
	}
	for _, sp := range p.ready {
		if sp.ahead != nil && !sp.broken {
			return nil
		}
	}
	for _, sp := range p.ready {
		if !sp.broken && sp.aheadDone == nil {
			return sp
		}
	}
	return nil
}

// claimAhead claims sp for Config.Ahead's claim while it stays parked: its
// output is held from the answer on (Spare.holdRoute). sp counts as booted
// once claude answers; a refusal leaves it parked unclaimed (booted), an
// answer that never comes (the process gone, ControlTimeout) marks it
// broken, and the owner closes it.
func (p *Pool) claimAhead(sp *Spare) {
	c := p.cfg.Ahead()
	p.mu.Lock()
	if c == nil || sp.aheadDone != nil || !slices.Contains(p.ready, sp) {
		if c == nil {
			sp.booted = true
			p.changedLocked()
		}
		p.mu.Unlock()
		return
	}
	c.IncludeInitialize = true
	sp.ahead = c
	sp.aheadDone = make(chan struct{})
	p.mu.Unlock()
	sent := time.Now()
	hold := sp.holdRoute()
	_, err := sp.Cli.CallAsync("claim_session", *c, func(resp json.RawMessage, err error) {
		if err == nil {
			sp.route.Store(hold) // on the stdout goroutine: before the next line is read
			if uerr := json.Unmarshal(resp, &sp.aheadRes); uerr != nil {
				err = fmt.Errorf("claim_session answer: %w", uerr)
			}
		}
		sp.aheadErr = err
		var refused *claudecli.CLIError
		p.mu.Lock()
		switch {
		case err == nil:
			sp.booted = true
		case errors.As(err, &refused):
			sp.ahead, sp.booted = nil, true // parked unclaimed (never claimed ahead again): a claim at take time may still be answered
		default:
			sp.broken = true
		}
		p.changedLocked()
		done := sp.aheadDone
		p.mu.Unlock()
		close(done)
		switch {
		case err == nil:
			p.log.Debug("spare claude claimed ahead of need", "pid", sp.Cli.PID(), "cwd", c.Cwd, "mode", c.PermissionMode, "after", time.Since(sent).Round(time.Millisecond))
		case errors.As(err, &refused):
			p.log.Warn("a spare claude refused the claim made ahead of need; it stays parked for any claim", "pid", sp.Cli.PID(), "cwd", c.Cwd, "err", err)
		default:
			p.log.Warn("a spare claude did not answer the claim made ahead of need; closing it", "pid", sp.Cli.PID(), "err", err)
			p.poke()
		}
	})
	if err != nil { // the process is gone: its watcher removes it
		p.mu.Lock()
		sp.broken = true
		p.mu.Unlock()
		p.poke()
	}
}

// watch waits for a parked spare to be taken or to exit by itself; an
// exit removes it and counts a failure (the owner backs off).
func (p *Pool) watch(sp *Spare) {
	select {
	case <-sp.taken:
		return
	case <-sp.Cli.Done():
	}
	p.mu.Lock()
	found := false
	for i, r := range p.ready {
		if r == sp {
			p.ready = append(p.ready[:i], p.ready[i+1:]...)
			found = true
			break
		}
	}
	closing := p.closed
	if found && !closing {
		p.failures++
		p.counts.failed++
		p.changedLocked()
	}
	n := p.failures
	p.mu.Unlock()
	if !found { // taken (or stale) meanwhile: its new owner has it
		return
	}
	sp.Cli.Wait()
	sp.Release()
	if closing {
		return
	}
	ex := sp.Cli.Exit()
	p.log.Warn("a spare claude exited while parked; launching another after a backoff", "pid", sp.Cli.PID(),
		"code", deref(ex.Code), "signal", deref(ex.Signal), "parked", sp.Parked().Round(time.Millisecond),
		"failures", n, "retry_in", p.backoff(n), "stderr_tail", tail(ex.StderrTail, 500))
	p.poke()
}

// closeAll closes every parked spare (the pool is closing).
func (p *Pool) closeAll() {
	p.mu.Lock()
	spares := p.ready
	p.ready = nil
	for _, sp := range spares {
		close(sp.taken)
	}
	if len(spares) > 0 {
		p.changedLocked()
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, sp := range spares {
		wg.Add(1)
		go func() { defer wg.Done(); sp.Close() }()
	}
	wg.Wait()
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Collector returns the pool's metrics for a Prometheus registry:
// ccproxy_spares (parked now), ccproxy_spare_takes_total by result
// (taken; none: no spare was parked; unfit: the session needed what no
// spare is launched with; refused: the claim failed),
// ccproxy_spare_launches_total, ccproxy_spare_failures_total (exited
// while parked, or could not start) and ccproxy_spare_replaced_total
// (closed for a configuration change).
func (p *Pool) Collector() prometheus.Collector { return &collector{p: p} }

type collector struct{ p *Pool }

var (
	descSpares   = prometheus.NewDesc("ccproxy_spares", "Spare claude processes parked and booted (serve --warm), each ready for a session/create; each costs one claude's memory.", nil, nil)
	descStarting = prometheus.NewDesc("ccproxy_spares_starting", "Spare claude processes launched and still starting (a session/create takes one when no booted spare is parked).", nil, nil)
	descTakes    = prometheus.NewDesc("ccproxy_spare_takes_total", "session/create and its spare, by result: taken (a booted one claimed), taken_starting (one still starting claimed), taken_ahead (one claimed ahead of need for the session's directory and mode, adopted), none (no spare parked), ahead_other (the only spares parked were claimed ahead for another directory or mode), unfit (the session needs what no spare has: model, resume, client MCP servers, bypassPermissions), refused (the claim failed; claude started as usual).", []string{"result"}, nil)
	descLaunches = prometheus.NewDesc("ccproxy_spare_launches_total", "Spare claude processes launched and parked.", nil, nil)
	descFailures = prometheus.NewDesc("ccproxy_spare_failures_total", "Spares that exited while parked or could not start (each followed by a backoff).", nil, nil)
	descReplaced = prometheus.NewDesc("ccproxy_spare_replaced_total", "Parked spares closed because the configuration they were launched with changed.", nil, nil)
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSpares, descStarting, descTakes, descLaunches, descFailures, descReplaced} {
		ch <- d
	}
}

// TakeResults are the values of ccproxy_spare_takes_total's result label.
var TakeResults = []string{"taken", "taken_starting", "taken_ahead", "none", "ahead_other", "unfit", "refused"}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.p.mu.Lock()
	booted, starting := c.p.bootedLocked()
	k := c.p.counts
	c.p.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descSpares, prometheus.GaugeValue, float64(booted))
	ch <- prometheus.MustNewConstMetric(descStarting, prometheus.GaugeValue, float64(starting))
	for i, v := range []int64{k.taken, k.takenStarting, k.takenAhead, k.none, k.aheadOther, k.unfit, k.refused} {
		ch <- prometheus.MustNewConstMetric(descTakes, prometheus.CounterValue, float64(v), TakeResults[i])
	}
	ch <- prometheus.MustNewConstMetric(descLaunches, prometheus.CounterValue, float64(k.launched))
	ch <- prometheus.MustNewConstMetric(descFailures, prometheus.CounterValue, float64(k.failed))
	ch <- prometheus.MustNewConstMetric(descReplaced, prometheus.CounterValue, float64(k.replaced))
}
