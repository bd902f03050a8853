package proxy

import "github.com/ccproxy/ccproxy/internal/childproc"

// stderrTail is claude's stderr tail for the exit report, marked when its
// beginning was dropped.
func stderrTail(t *childproc.Tail) string {
	text, truncated := t.Text()
	if truncated {
		return "[…earlier stderr dropped…]\n" + text
	}
	return text
}
