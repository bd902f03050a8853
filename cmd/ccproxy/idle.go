package main

import (
	"time"

	"github.com/ccproxy/ccproxy/proxy"
)

// idleTimeout checks --idle-timeout (d) and makes 0 the proxy's "never".
func idleTimeout(cmd string, d *time.Duration) error {
	switch {
	case *d < 0:
		return usagef("%s: --idle-timeout %v is negative (0 never suspends a session)", cmd, *d)
	case *d == 0:
		*d = -1 // proxy: never
	case *d < proxy.MinIdleTimeout:
		return usagef("%s: --idle-timeout %v is too short: at least %v (0: never)", cmd, *d, proxy.MinIdleTimeout)
	}
	return nil
}
