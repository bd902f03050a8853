package childproc

import "errors"

// ErrNoTerminal is returned by OpenTerminal where ccproxy cannot make a
// pseudo-terminal.
var ErrNoTerminal = errors.New("childproc: pseudo-terminals are not supported")

// TerminalSupported reports whether OpenTerminal works on this platform.
const TerminalSupported = terminalSupported
