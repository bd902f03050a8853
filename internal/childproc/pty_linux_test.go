package childproc

import (
	"os"
	"os/exec"
	"testing"
)

// TestOpenTerminal: a child given the tty as stdin sees a terminal there
// (through the guard too), one given /dev/null does not.
func TestOpenTerminal(t *testing.T) {
	master, tty, err := OpenTerminal()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	run := func(stdin *os.File) error {
		cmd := exec.Command("sh", "-c", "test -t 0")
		cmd.Stdin = stdin
		if err := Start(cmd); err != nil {
			t.Fatal(err)
		}
		return cmd.Wait()
	}
	if err := run(tty); err != nil {
		t.Errorf("stdin on the tty: test -t 0 says %v", err)
	}
	tty.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if err := run(null); err == nil {
		t.Errorf("stdin on %s: test -t 0 says it is a terminal", os.DevNull)
	}
}
