package mcptest

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
)

// Sizes of the generated payloads.
const (
	SmallImageSide  = 16        // the image tool's PNG is 16×16
	LargeImageSide  = 1024      // the large_image tool's PNG is 1024×1024 RGB noise (~3 MiB)
	LargeTextBytes  = 5_000_000 // default size of the large_text tool's text
	AudioSampleRate = 8000      // the audio tool's WAV: 0.1 s of a 440 Hz tone, 16-bit mono
)

// UnicodeText is what the unicode tool returns: C0 controls (NUL, BEL, an
// ANSI colour escape), DEL and NEL, bidirectional text with an override,
// emoji sequences, the line and paragraph separators U+2028/U+2029, a BOM,
// a combining accent, CJK, a tab and a CRLF.
const UnicodeText = "controls: \x00 \x07 \x1b[31mred\x1b[0m \x7f \u0085|" +
	" bidi: \u202eevil\u202c مرحبا بالعالم שלום|" +
	" emoji: 👩\u200d👩\u200d👧\u200d👦 🏳\ufe0f\u200d🌈 👍🏽|" +
	" separators: a\u2028b\u2029c|" +
	" bom: \ufeff| combining: e\u0301| cjk: 漢字| tab:\t| crlf:\r\n| end"

var (
	smallPNGOnce sync.Once
	smallPNG     []byte
	largePNGOnce sync.Once
	largePNG     []byte
	wavOnce      sync.Once
	wav          []byte
)

// SmallPNG is the image tool's picture: a deterministic 16×16 gradient.
func SmallPNG() []byte {
	smallPNGOnce.Do(func() {
		img := image.NewNRGBA(image.Rect(0, 0, SmallImageSide, SmallImageSide))
		for y := range SmallImageSide {
			for x := range SmallImageSide {
				img.Set(x, y, color.NRGBA{R: uint8(x * 16), G: uint8(y * 16), B: 128, A: 255})
			}
		}
		smallPNG = encodePNG(img, png.DefaultCompression)
	})
	return smallPNG
}

// LargePNG is the large_image tool's picture: 1024×1024 opaque pixels of
// seeded noise, so it does not compress and the PNG really is about 3 MiB.
// It is the same on every run.
func LargePNG() []byte {
	largePNGOnce.Do(func() {
		img := image.NewRGBA(image.Rect(0, 0, LargeImageSide, LargeImageSide))
		rng := rand.New(rand.NewPCG(2026, 329))
		for i := 0; i < len(img.Pix); i += 4 {
			v := rng.Uint32()
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(v), uint8(v>>8), uint8(v>>16), 255
		}
		largePNG = encodePNG(img, png.BestSpeed)
	})
	return largePNG
}

func encodePNG(img image.Image, level png.CompressionLevel) []byte {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: level}
	if err := enc.Encode(&buf, img); err != nil {
		// Encoding an in-memory image to a bytes.Buffer cannot fail.
		panic("mcptest: encoding a PNG: " + err.Error())
	}
	return buf.Bytes()
}

// WAV is the audio tool's sound: 0.1 s of a 440 Hz sine, 8 kHz 16-bit mono.
func WAV() []byte {
	wavOnce.Do(func() {
		const n = AudioSampleRate / 10
		data := make([]byte, 2*n)
		for i := range n {
			v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/AudioSampleRate))
			binary.LittleEndian.PutUint16(data[2*i:], uint16(v))
		}
		var b bytes.Buffer
		le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
		b.WriteString("RIFF")
		le(uint32(36 + len(data)))
		b.WriteString("WAVEfmt ")
		le(uint32(16))                  // fmt chunk size
		le(uint16(1))                   // PCM
		le(uint16(1))                   // mono
		le(uint32(AudioSampleRate))     // sample rate
		le(uint32(AudioSampleRate * 2)) // byte rate
		le(uint16(2))                   // block align
		le(uint16(16))                  // bits per sample
		b.WriteString("data")
		le(uint32(len(data)))
		b.Write(data)
		wav = b.Bytes()
	})
	return wav
}

// LargeText returns n bytes of numbered ASCII lines, the same on every run.
func LargeText(n int) string {
	if n <= 0 {
		return ""
	}
	const filler = " the quick brown fox jumps over the lazy dog 0123456789\n"
	var b strings.Builder
	b.Grow(n + 80)
	for line := 1; b.Len() < n; line++ {
		b.WriteString("line ")
		b.WriteString(pad(line))
		b.WriteString(filler)
	}
	return b.String()[:n]
}

func pad(n int) string {
	s := []byte("0000000")
	for i := len(s) - 1; i >= 0 && n > 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}

// BlobBytes is the resource_blob tool's binary payload: the 256 byte values
// in order.
func BlobBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}
