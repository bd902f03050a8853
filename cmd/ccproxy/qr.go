package main

import (
	"fmt"
	"io"
	"strings"

	qrcode "github.com/yeqown/go-qrcode/v2"
)

// qrQuiet is the quiet zone around a QR code, in modules (the standard's 4).
const qrQuiet = 4

// qrBitmap encodes text as a QR code (error correction M) and returns its
// modules, true for dark, without the quiet zone.
func qrBitmap(text string) ([][]bool, error) {
	q, err := qrcode.NewWith(text, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionMedium))
	if err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	var w bitmapWriter
	if err := q.Save(&w); err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	return w.bits, nil
}

// bitmapWriter is a qrcode.Writer that keeps the modules.
type bitmapWriter struct{ bits [][]bool }

func (w *bitmapWriter) Write(m qrcode.Matrix) error { w.bits = m.Bitmap(); return nil }
func (w *bitmapWriter) Close() error                { return nil }

// renderQR draws modules with Unicode half blocks, two rows of modules per
// line, with the quiet zone. Light modules are drawn and dark ones left
// blank, as `qrencode -t UTF8` does: on a terminal's usual light-on-dark
// text this shows dark modules on a light square, as scanners expect.
func renderQR(bits [][]bool) string {
	n := len(bits)
	dark := func(x, y int) bool {
		x, y = x-qrQuiet, y-qrQuiet
		return x >= 0 && y >= 0 && y < n && x < len(bits[y]) && bits[y][x]
	}
	size := n + 2*qrQuiet
	var b strings.Builder
	for y := 0; y < size; y += 2 {
		for x := 0; x < size; x++ {
			top := !dark(x, y)
			bottom := y+1 < size && !dark(x, y+1)
			switch {
			case top && bottom:
				b.WriteString("█")
			case top:
				b.WriteString("▀")
			case bottom:
				b.WriteString("▄")
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// printLoginQR writes link as a QR code for a phone to scan, with the link
// under it.
func printLoginQR(w io.Writer, link string) error {
	bits, err := qrBitmap(link)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nScan this one-time login link with a phone:\n\n%s\n    %s\n\n", renderQR(bits), link)
	return err
}
