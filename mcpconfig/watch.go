package mcpconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Event is one change of the resolved configuration.
type Event struct {
	Config *Config
	// Changes is relative to the Config of the previous event (or, for the
	// first event, to Watcher.Initial).
	Changes Changes
	// Coalesced counts the configurations that were replaced by a newer one
	// before the receiver took this event (it was slow); Changes still
	// covers everything since the previous event.
	Coalesced int
}

// Watcher keeps a configuration up to date: it watches (with fsnotify) the
// folders of every file Resolve reads, resolves again after a burst of
// changes has settled (Options.Debounce), and sends an Event when the
// result differs. Saving in place, atomic-rename saves, deleting and
// re-creating, and files or folders that appear later are all seen: it
// watches each file's folder, or the nearest existing ancestor until the
// folder exists. A file that becomes invalid keeps its last valid content
// (the error is in Config.Errors) until it is fixed.
//
// One goroutine, started by NewWatcher and owned by the Watcher, does all
// of this. Events holds at most one undelivered event: while the receiver is
// slow, newer configurations replace it (Event.Coalesced counts them), so
// the Watcher never blocks and never loses the latest state. Current,
// Events and Close are safe for concurrent use. Close stops the goroutine,
// waits for it, closes the Events channel and may be called more than once.
type Watcher struct {
	r       *resolver
	fs      *fsnotify.Watcher
	log     func(msg string, args ...any)
	paths   []string // every file Resolve reads, present or not (r.sourcePaths)
	initial *Config
	current atomic.Pointer[Config]
	events  chan Event

	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	// owned by the run goroutine
	relevant map[string]bool // paths whose events matter: sources, their ancestors, symlink targets
}

// maxDelayFactor bounds how long a continuous stream of events can postpone
// a reload: at most this many debounce periods.
const maxDelayFactor = 10

// NewWatcher resolves the configuration once and starts watching. The
// first resolution is Initial (and Current); Events only carries changes.
func NewWatcher(opts Options) (*Watcher, error) {
	r, err := newResolver(opts)
	if err != nil {
		return nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: start file watcher: %w", err)
	}
	w := &Watcher{
		r: r, fs: fw, log: r.opts.Logger.Warn, paths: r.sourcePaths(),
		events: make(chan Event), done: make(chan struct{}),
		relevant: map[string]bool{},
	}
	// Watch first, then read: a change made in between is then an event.
	w.updateWatches(w.paths)
	cfg := r.resolve()
	w.initial = cfg
	w.current.Store(cfg)
	w.wg.Add(1)
	go w.run()
	return w, nil
}

// Initial is the configuration resolved by NewWatcher.
func (w *Watcher) Initial() *Config { return w.initial }

// Current is the latest configuration, which may be newer than the last
// event received.
func (w *Watcher) Current() *Config { return w.current.Load() }

// Events delivers changes. It is closed when the Watcher is closed.
func (w *Watcher) Events() <-chan Event { return w.events }

// Close stops watching and waits until the Watcher's goroutine has ended.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.done)
		w.wg.Wait()
		w.closeErr = w.fs.Close()
	})
	return w.closeErr
}

func (w *Watcher) hook(cfg *Config, pending bool) {
	if h := w.r.opts.reloadHook; h != nil {
		h(cfg, pending)
	}
}

func (r *resolver) sourcePaths() []string {
	var out []string
	for _, s := range r.sources() {
		out = append(out, s.path)
	}
	return out
}

func (w *Watcher) run() {
	defer w.wg.Done()
	defer close(w.events)
	debounce := w.r.opts.Debounce
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var timerOn bool
	var burstStart time.Time
	schedule := func() {
		now := time.Now()
		if !timerOn {
			burstStart = now
			timerOn = true
		}
		d := debounce
		if left := burstStart.Add(maxDelayFactor * debounce).Sub(now); left < d {
			d = max(left, 0)
		}
		timer.Reset(d)
	}
	delivered := w.initial
	var pending *Event
	for {
		var out chan Event
		var ev Event
		if pending != nil {
			out, ev = w.events, *pending
		}
		select {
		case <-w.done:
			return
		case fe, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if w.relevant[fe.Name] {
				schedule()
			}
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// Typically an event queue overflow: events were lost, so
			// look at everything again.
			w.log("mcpconfig: file watcher error; resolving again", "error", err)
			schedule()
		case <-timer.C:
			timerOn = false
			cfg := w.r.resolve()
			if w.updateWatches(w.paths) {
				schedule() // something may have appeared before its folder was watched
			}
			if Diff(w.current.Load(), cfg).Empty() {
				w.hook(cfg, pending != nil)
				continue
			}
			w.current.Store(cfg)
			ch := Diff(delivered, cfg)
			switch {
			case pending != nil && ch.Empty():
				pending = nil // changed back before anyone looked
			case pending != nil:
				pending = &Event{Config: cfg, Changes: ch, Coalesced: pending.Coalesced + 1}
			default:
				pending = &Event{Config: cfg, Changes: ch}
			}
			w.hook(cfg, pending != nil)
		case out <- ev:
			delivered = ev.Config
			pending = nil
		}
	}
}

// updateWatches makes the watched folders match files: for each file its
// folder, or the nearest existing ancestor; for a symlinked file also its
// target's folder. It reports whether a folder was added.
func (w *Watcher) updateWatches(files []string) bool {
	want := map[string]bool{}
	relevant := map[string]bool{}
	mark := func(p string) {
		for {
			relevant[p] = true
			parent := filepath.Dir(p)
			if parent == p {
				return
			}
			p = parent
		}
	}
	for _, f := range files {
		mark(f)
		want[existingDir(filepath.Dir(f))] = true
		if fi, err := os.Lstat(f); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if target, err := filepath.EvalSymlinks(f); err == nil {
				mark(target)
				want[existingDir(filepath.Dir(target))] = true
			}
		}
	}
	// The watch list, not a copy of it: a deleted folder's watch is gone.
	watched := map[string]bool{}
	for _, d := range w.fs.WatchList() {
		watched[d] = true
	}
	added := false
	dirs := make([]string, 0, len(want))
	for d := range want {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if watched[d] {
			continue
		}
		if err := w.fs.Add(d); err != nil {
			w.log("mcpconfig: cannot watch folder", "dir", d, "error", err)
			continue
		}
		added = true
	}
	for d := range watched {
		if !want[d] {
			// Removing a folder that was deleted meanwhile fails; that is fine.
			if err := w.fs.Remove(d); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
				w.log("mcpconfig: cannot stop watching folder", "dir", d, "error", err)
			}
		}
	}
	w.relevant = relevant
	return added
}

// existingDir returns dir or its nearest ancestor that is a directory.
func existingDir(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}
