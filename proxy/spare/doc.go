// Package spare keeps warm spares for `ccproxy serve`: claude processes
// started with --await-claim ahead of need, parked, so that a new session
// takes one at once (claim_session: about 70 ms) instead of paying a whole
// CLI start (docs/CLI-NOTES.md, "Spares"). It knows nothing of sessions:
// the proxy launches each spare (Config.Launch builds its command line and
// hands the spare's handlers to claudecli), takes one for a session (Take),
// claims it (Spare.Claim, which routes the process's events to the session
// from the claim's answer on) and then owns its process.
//
// # Data flow
//
//	Pool owner goroutine ─► Config.Launch (claude --await-claim, parked in the project directory)
//	                    ─► ready (at most Config.N; each tagged with Config.Current() at launch)
//	session/create ─► Take(tag) ─► Spare.Claim(cwd, permission_mode, include_initialize) ─► the session's handlers
//	               └─ a new spare is launched in the background (the owner is kicked)
//	configuration change ─► Refresh ─► the owner closes the spares whose tag is no longer Current, launches new ones
//	a spare exits by itself ─► its watcher removes it ─► the owner launches another after a backoff
//	                           (Backoff doubling to MaxBackoff; reset once a spare is taken)
//
// With Config.Ahead (the proxy: its project directory, the default mode)
// one parked spare at a time is claimed ahead of need once it has booted;
// from the claim's answer on its output is held (clones, at most
// maxHeldEvents and maxHeldBytes) until a session whose claim it is takes
// it (Take ranks it first for that claim and never hands it out for
// another), checks Spare.Ahead and calls Adopt, which hands the held
// output over in order before routing the rest. A refusal leaves the spare
// parked for any claim; a claim ahead left unanswered marks it broken and
// the owner closes it.
//
// A spare is booted once it answers a probe (mcp_status, sent at launch:
// claude reads stdin only when it has started); until then it is parked
// but starting. Take hands out a booted spare first, else one still
// starting (its claim is answered when it has started: never later than a
// claude spawned then). ccproxy_spares counts the booted ones,
// ccproxy_spares_starting the others.
//
// While parked a spare prints only system/ui_invalidate events; they are
// dropped (also after the claim), as are its other events until the claim
// is answered, and a control request of its own is refused.
//
// # Goroutines and locks
//
// The Pool owns one owner goroutine (run: launches, closes stale spares,
// waits out the backoff) and one watcher per parked spare (it ends when
// the spare is taken or has exited); all are in Pool.wg. A claim made
// ahead runs no goroutine of its own: the probe's callback or Take sends
// it (CallAsync never blocks) and its answer comes on the spare's stdout
// goroutine. Spare.hold.mu guards the held output and orders it with
// Adopt's switch of the route. Close cancels the
// pool's context: the owner closes every parked spare (stdin EOF, then
// claudecli's grace and signals) and returns, the watchers see the exits;
// Close waits for all of them and is idempotent. A spare handed out by
// Take belongs to the taker, who must Close or adopt its process. A claim
// under way when the pool closes is cancelled (Claim's context is the
// pool's too). Pool.mu guards ready, each parked Spare's booted, closed,
// failures and the counters; it is a leaf (nothing is called with it held
// but a channel send that never blocks). The probe's answer comes on the
// spare's stdout goroutine (or its control timer, which sends the probe
// again). Spare.route is an atomic pointer (set once, by the claim).
package spare
