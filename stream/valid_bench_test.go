package stream

import (
	"testing"

	"github.com/tidwall/gjson"
)

// BenchmarkValid compares the validator with gjson.Valid on the lines of
// the text-heavy mix.
func BenchmarkValid(b *testing.B) {
	lines, _ := benchMix(b, 8<<20, true)
	b.Run("validator", func(b *testing.B) {
		n := NewNormalizer(Options{})
		b.SetBytes(mixBytes(lines))
		for b.Loop() {
			for _, l := range lines {
				n.valid(bstr(l))
			}
		}
	})
	b.Run("gjson", func(b *testing.B) {
		b.SetBytes(mixBytes(lines))
		for b.Loop() {
			for _, l := range lines {
				gjson.ValidBytes(l)
			}
		}
	})
}
