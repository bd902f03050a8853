package remote

import "fmt"

// CheckToken validates a token (the proxy's Options.Token): 16 to 512
// characters of A-Z a-z 0-9 . _ ~ -, so that it fits in a websocket
// subprotocol name and is hard to guess. Its error says what is wrong, not
// where the token came from (nor the token).
func CheckToken(t string) error {
	if len(t) < 16 {
		return fmt.Errorf("at least 16 characters are needed, got %d", len(t))
	}
	if len(t) > 512 {
		return fmt.Errorf("at most 512 characters, got %d", len(t))
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '~' || c == '-') {
			return fmt.Errorf("character %d is not one of A-Z a-z 0-9 . _ ~ -", i+1)
		}
	}
	return nil
}
