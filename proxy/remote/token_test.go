package remote

import (
	"strings"
	"testing"
)

func TestCheckToken(t *testing.T) {
	for _, tc := range []struct {
		token, err string
	}{
		{strings.Repeat("a", 16), ""},
		{"A-z.0_9~" + strings.Repeat("x", 8), ""},
		{"short", "at least 16 characters are needed, got 5"},
		{strings.Repeat("a", 513), "at most 512 characters, got 513"},
		{strings.Repeat("a", 16) + " ", "character 17 is not one of"},
	} {
		err := CheckToken(tc.token)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckToken(%.20q…) = %v, want %q", tc.token, err, tc.err)
		}
	}
}
