package stream

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// flat is a content array (or a single content block) flattened in this
// event.
type flat struct {
	raw      []byte       // its bytes in the line
	text     []byte       // its text, as a JSON string
	atts     []Attachment // the attachments taken out of it
	attsJSON [][]byte     // atts as a JSON array in pieces, made when first needed
	blocks   bool         // every element is an object with a string "type"
}

// flatten turns a content array (or a single content block) into plain text
// and the attachments taken out of it. Text parts are kept in order and
// joined with "\n"; every other part leaves a short placeholder in the text.
// An array flattened earlier in the event (tool_use_result repeats the
// tool_result content byte for byte) is not flattened again: the earlier
// result is returned. The result is valid until the next event.
func (n *Normalizer) flatten(content gjson.Result) *flat {
	raw := n.origRaw(content)
	if f := n.flattened(raw); f != nil {
		return f
	}
	return n.flattenNew(content, raw)
}

// flattenNew flattens content, whose bytes in the line are raw, not
// flattened yet in this event.
func (n *Normalizer) flattenNew(content gjson.Result, raw []byte) *flat {
	f := flat{raw: raw, blocks: true}
	// The texts of an event share a buffer, kept from event to event.
	start := len(n.texts)
	text := append(slices.Grow(n.texts, len(content.Raw)+2), '"')
	first := true
	add := func(block gjson.Result, fl *fields) {
		part, token, att, ok, isBlock := n.part(block, fl)
		if !first {
			text = append(text, '\\', 'n')
		}
		first = false
		text = n.appendText(text, part, token)
		if ok {
			f.atts = append(f.atts, att)
		}
		f.blocks = f.blocks && isBlock
	}
	if content.IsObject() {
		add(content, nil)
	} else {
		// The elements of the array; an object's members are read on the
		// way over it.
		b, base := content.Raw, content.Index
		for i := skipSpace(b, 1); i < len(b) && b[i] != ']'; {
			var end int
			if out, e, ok := n.appendTextPart(text, !first, b, i); ok {
				// The common text part, read without the walker.
				text, end, first = out, e, false
			} else if b[i] == '{' {
				var fl fields
				fl, end = n.membersAt(b, base, i)
				add(gjson.Result{Type: gjson.JSON, Raw: b[i:end], Index: base + i}, &fl)
			} else {
				end = n.valueEnd(b, i)
				add(result(b[i:end], base+i), nil)
			}
			if i = skipSpace(b, end); i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
	}
	text = append(text, '"')
	f.text = text[start:len(text):len(text)]
	n.texts = text
	n.ev.flats = append(n.ev.flats, f)
	return &n.ev.flats[len(n.ev.flats)-1]
}

// textPartPrefix opens a text part as the CLI prints it.
const textPartPrefix = `{"type":"text","text":"`

// appendTextPart reads b[i:] if it starts with a text part exactly as the
// CLI prints it, {"type":"text","text":"…"} and nothing more, whose text
// token is what appendEscapedString would write for its text: it appends
// "\n" (when sep) and the token's body to dst, and returns the offset past
// the part. The token is read once, not found then copied. Such a part is
// what the walker would read as a text block (members type and text, no
// other), so the flattened text is the same as the general way gives; a
// string taken out of a skeleton is left to the general way. ok is false
// (and dst unchanged) for any other part.
func (n *Normalizer) appendTextPart(dst []byte, sep bool, b string, i int) (out []byte, end int, ok bool) {
	if len(b)-i < len(textPartPrefix)+2 || b[i:i+len(textPartPrefix)] != textPartPrefix {
		return dst, 0, false
	}
	q := i + len(textPartPrefix) - 1
	out = dst
	if sep {
		out = append(out, '\\', 'n')
	}
	out, end, ok = appendTextToken(out, b, q)
	if !ok || end >= len(b) || b[end] != '}' || end-q == 2 && len(n.spans) > 0 {
		return dst, 0, false
	}
	return out, end + 1, true
}

// appendText appends part (see part; token says whether it is a JSON
// string token) to the JSON string being built in dst. A token is read
// straight into its escaped text (appendTextToken) when it can be, instead
// of unescaped and escaped again.
func (n *Normalizer) appendText(dst []byte, part string, token bool) []byte {
	if !token {
		return appendEscapedString(dst, part)
	}
	if out, _, ok := appendTextToken(dst, part, 0); ok {
		return out
	}
	return appendEscapedString(dst, gjson.Parse(part).Str)
}

// flattened returns the array with these bytes flattened earlier in the
// event, or nil.
func (n *Normalizer) flattened(raw []byte) *flat {
	for i := range n.ev.flats {
		if f := &n.ev.flats[i]; bytes.Equal(f.raw, raw) {
			return f
		}
	}
	return nil
}

// attachmentsJSON returns f.atts as a JSON array, in pieces (see
// attachmentPieces).
func (f *flat) attachmentsJSON() [][]byte {
	if f.attsJSON == nil {
		f.attsJSON = attachmentPieces(f.atts)
	}
	return f.attsJSON
}

// fields holds the members of a content block (or of its source or
// resource object) that normalizing looks at: the first of each name, as
// gjson's Get finds it.
type fields struct {
	typ, text, source, data, mimeType, mediaType, resource, name, uri, url, blob rawValue
	content, toolUseID                                                           rawValue // of a tool_result
}

// members reads object obj once (instead of once per Get).
func (n *Normalizer) members(obj gjson.Result) fields {
	f, _ := n.membersAt(obj.Raw, obj.Index, 0)
	return f
}

// membersAt reads the object opening at b[i] (see walkMembers) and returns
// its fields and the offset just past it.
func (n *Normalizer) membersAt(b string, base, i int) (fields, int) {
	var f fields
	end := n.walkMembers(b, base, i, func(k string, v rawValue) bool {
		var p *rawValue
		switch k {
		case "type":
			p = &f.typ
		case "text":
			p = &f.text
		case "source":
			p = &f.source
		case "data":
			p = &f.data
		case "mimeType":
			p = &f.mimeType
		case "media_type":
			p = &f.mediaType
		case "resource":
			p = &f.resource
		case "name":
			p = &f.name
		case "uri":
			p = &f.uri
		case "url":
			p = &f.url
		case "blob":
			p = &f.blob
		case "content":
			p = &f.content
		case "tool_use_id":
			p = &f.toolUseID
		default:
			return true
		}
		if p.raw == "" {
			*p = v
		}
		return true
	})
	return f, end
}

// part returns the text standing for one content block and, for a non-text
// block, its attachment; isBlock says whether it is an object with a string
// "type". fl, if not nil, holds the block's fields, already read. The text
// of a text block may be returned as its JSON string token, quotes
// included, and token true (appendText writes it).
func (n *Normalizer) part(block gjson.Result, fl *fields) (text string, token bool, att Attachment, hasAtt, isBlock bool) {
	if !block.IsObject() {
		if block.Type == gjson.String {
			return n.str(block), false, Attachment{}, false, false
		}
		return bstr(n.origRaw(block)), false, Attachment{}, false, false
	}
	if fl == nil {
		f := n.members(block)
		fl = &f
	}
	f := fl
	// A type taken out of a skeleton is still a string.
	isBlock = f.typ.isString()
	typ := n.str(f.typ.result())
	switch typ {
	case "text":
		if raw := f.text.raw; len(raw) > 2 && raw[0] == '"' {
			// Not a string taken out of a skeleton (those are ""): the
			// caller may copy its escaped bytes as they are.
			return raw, true, Attachment{}, false, isBlock
		}
		return n.str(f.text.result()), false, Attachment{}, false, isBlock
	case "image", "audio", "document":
		// Anthropic form {source:{type:"base64",media_type,data}} or
		// {source:{type:"url",url}}; MCP form {data, mimeType}.
		if f.source.raw != "" {
			src := n.members(f.source.result())
			if n.str(src.typ.result()) == "url" {
				url := n.str(src.url.result())
				return "[" + typ + " " + url + "]", false, Attachment{Kind: typ, URL: url}, true, isBlock
			}
			text, att := n.binary(typ, n.str(src.mediaType.result()), "", src.data.result())
			return text, false, att, true, isBlock
		}
		text, att := n.binary(typ, n.str(f.mimeType.result()), "", f.data.result())
		return text, false, att, true, isBlock
	case "resource":
		res := n.members(f.resource.result())
		if res.text.raw != "" {
			return n.str(res.text.result()), false, Attachment{}, false, isBlock
		}
		text, att := n.binary("resource", n.str(res.mimeType.result()), n.str(res.uri.result()), res.blob.result())
		return text, false, att, true, isBlock
	case "resource_link":
		name, uri := n.str(f.name.result()), n.str(f.uri.result())
		if name == "" || name == uri {
			return "[resource link] " + uri, false, Attachment{}, false, isBlock
		}
		return "[resource link: " + name + "] " + uri, false, Attachment{}, false, isBlock
	}
	// Any other block: described in the text, kept whole as JSON.
	if typ == "" {
		typ = "block"
	}
	raw := n.origRaw(block)
	att = n.describe(typ, "application/json", "", raw)
	att.Data = ""
	if n.opts.Attachments == AttachInline {
		att.Data = base64.StdEncoding.EncodeToString(raw)
	}
	n.store(&att, raw)
	n.collect(att)
	return placeholder(att), false, att, true, isBlock
}

// binary makes the attachment of a base64-encoded part. The same data seen
// earlier in the event (the CLI prints each image twice) is not decoded and
// hashed again.
func (n *Normalizer) binary(kind, mediaType, uri string, data gjson.Result) (string, Attachment) {
	enc := n.str(data)
	for _, d := range n.ev.decoded {
		if d.data == enc && d.att.Kind == kind && d.att.MediaType == mediaType && d.att.URI == uri {
			return placeholder(d.att), d.att
		}
	}
	att := n.binaryAttachment(kind, mediaType, uri, enc)
	n.ev.decoded = append(n.ev.decoded, decoded{data: enc, att: att})
	n.collect(att)
	return placeholder(att), att
}

func (n *Normalizer) binaryAttachment(kind, mediaType, uri, enc string) Attachment {
	// Decode and hash a block at a time, each block hashed while it is
	// fresh in the cache: into one buffer when the sink needs the data
	// whole, else into a small one. (+3: room for a last quantum whatever
	// its padding.)
	var dst []byte
	if n.opts.Attachments == AttachSink {
		dst = n.decodeBuf(base64.StdEncoding.DecodedLen(len(enc)) + 3)
	}
	size, sum, ok := n.hashBase64(enc, dst)
	if ok {
		att := Attachment{Kind: kind, MediaType: mediaType, Size: size, SHA256: hex.EncodeToString(sum[:]), URI: uri}
		if n.opts.Attachments == AttachSink {
			n.store(&att, dst[:size])
		}
		if n.opts.Attachments == AttachInline || att.Error != "" {
			att.Data = enc
		}
		putBig(dst)
		return att
	}
	putBig(dst)
	// Line breaks, or not base64: decode says which.
	dec, err := n.decode(enc)
	if err != nil {
		// Not base64: describe the raw text so nothing is lost.
		att := n.describe(kind, mediaType, uri, sbytes(enc))
		att.Error = "data is not valid base64: " + err.Error()
		if n.opts.Attachments != AttachStrip {
			att.Data = enc
		}
		return att
	}
	att := n.describe(kind, mediaType, uri, dec)
	if n.opts.Attachments == AttachInline {
		att.Data = enc
	}
	n.store(&att, dec)
	putBig(dec)
	if att.Error != "" {
		att.Data = enc
	}
	return att
}

func (n *Normalizer) describe(kind, mediaType, uri string, data []byte) Attachment {
	sum := sha256.Sum256(data)
	return Attachment{Kind: kind, MediaType: mediaType, Size: len(data), SHA256: hex.EncodeToString(sum[:]), URI: uri}
}

// store hands the data to the sink, once per sha256 per event.
func (n *Normalizer) store(att *Attachment, data []byte) {
	if n.opts.Attachments != AttachSink {
		return
	}
	for _, seen := range n.ev.atts {
		if seen.SHA256 == att.SHA256 && seen.URL != "" {
			att.URL = seen.URL
			return
		}
	}
	url, err := n.opts.Sink.PutAttachment(att.owned(), data)
	if err != nil {
		att.Error = "attachment not stored: " + err.Error()
		return
	}
	att.URL = url
}

// owned returns a copy of a whose strings do not point into the line or the
// view (which the caller reuses), without its Data.
func (a Attachment) owned() Attachment {
	return Attachment{Kind: strings.Clone(a.Kind), MediaType: strings.Clone(a.MediaType), Size: a.Size,
		SHA256: a.SHA256, URI: strings.Clone(a.URI), URL: a.URL, Error: a.Error}
}

// collect adds att to the event's attachments unless one with its sha256 is
// there already.
func (n *Normalizer) collect(att Attachment) {
	for _, seen := range n.ev.atts {
		if seen.SHA256 == att.SHA256 {
			return
		}
	}
	n.ev.atts = append(n.ev.atts, att)
}

// hashBlock is how much base64 hashBase64 decodes at a time (a multiple
// of 4).
const hashBlock = 64 << 10

// hashBase64 returns the length and sha256 of the data that standard base64
// s encodes (as decode reads it), decoding hashBlock bytes of it at a time
// into a small buffer, or, when dst is not nil, into dst (which must have
// room for the whole). It returns false when s has line breaks or is not
// valid (decode then says why).
func (n *Normalizer) hashBase64(s string, dst []byte) (size int, sum [sha256.Size]byte, ok bool) {
	if strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0 {
		return 0, sum, false
	}
	enc := base64.StdEncoding
	if len(s)%4 != 0 && strings.IndexByte(s, '=') < 0 {
		enc = base64.RawStdEncoding
	}
	if dst == nil && cap(n.block) < hashBlock/4*3 {
		n.block = make([]byte, hashBlock/4*3)
	}
	h := sha256.New()
	for len(s) > 0 {
		chunk := s[:min(hashBlock, len(s))]
		s = s[len(chunk):]
		if len(s) > 0 && strings.IndexByte(chunk, '=') >= 0 {
			return 0, sum, false // padding before the end
		}
		out := n.block[:cap(n.block)]
		if dst != nil {
			out = dst[size:cap(dst)]
		}
		k, err := enc.Decode(out, sbytes(chunk))
		if err != nil {
			return 0, sum, false
		}
		h.Write(out[:k])
		size += k
	}
	h.Sum(sum[:0])
	return size, sum, true
}

// decode decodes standard base64 (padding optional, line breaks ignored)
// into a buffer from decodeBuf; the caller hands the result to putBig when
// done.
func (n *Normalizer) decode(s string) ([]byte, error) {
	enc := base64.StdEncoding
	if len(s)%4 != 0 && !strings.ContainsAny(s, "=\r\n") {
		enc = base64.RawStdEncoding
	}
	need := enc.DecodedLen(len(s))
	buf := n.decodeBuf(need)
	k, err := enc.Decode(buf[:need], sbytes(s))
	if err != nil {
		putBig(buf)
		return nil, err
	}
	return buf[:k], nil
}

// decodeBuf returns a buffer with room for need bytes: the Normalizer's
// scratch buffer, or for more than retainBytes a pooled one. The caller
// hands it to putBig when done, which keeps the scratch buffer (it is
// under the pools' sizes) and pools a long one.
func (n *Normalizer) decodeBuf(need int) []byte {
	if need > retainBytes {
		return getBig(need)[:need]
	}
	if cap(n.scratch) < need {
		n.scratch = make([]byte, need)
	}
	return n.scratch[:need]
}

// placeholder is the text standing for an attachment, e.g.
// "[image image/png 1.2 KiB]".
func placeholder(a Attachment) string {
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(a.Kind)
	if a.MediaType != "" {
		b.WriteByte(' ')
		b.WriteString(a.MediaType)
	}
	if a.URI != "" {
		b.WriteByte(' ')
		b.WriteString(a.URI)
	}
	b.WriteByte(' ')
	b.WriteString(FormatSize(a.Size))
	b.WriteByte(']')
	return b.String()
}

// FormatSize spells a byte count for people: "512 B", "1.2 KiB", "3.0 MiB".
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return strconv.Itoa(n) + " B"
	case n < 1024*1024:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	case n < 1024*1024*1024:
		return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024*1024), 'f', 1, 64) + " GiB"
}

// attachmentPieces encodes a list of attachments as a JSON array cut in
// pieces that, joined, make the array. Base64 data that needs no escaping
// (all of it, in practice) is a piece of its own that is not copied: it is
// a.Data's bytes, which point into the line being normalized (or, for a
// block kept whole, to its encoding), so a rewritten image line written in
// pieces does not hold its data twice.
func attachmentPieces(atts []Attachment) [][]byte {
	var pieces [][]byte
	b := []byte{'['}
	for i, a := range atts {
		if i > 0 {
			b = append(b, ',')
		}
		data := a.Data
		if data != "" && plainJSON(data) {
			a.Data = ""
			b = appendAttachment(b, a)
			b = append(b[:len(b)-1], `,"data":"`...)
			pieces = append(pieces, b, sbytes(data))
			b = []byte{'"', '}'}
			continue
		}
		b = appendAttachment(b, a)
	}
	return append(pieces, append(b, ']'))
}

// plainJSON reports whether s goes into a JSON string as is: printable
// ASCII that appendJSONString does not escape.
func plainJSON(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !safeWord(binary.LittleEndian.Uint64(sbytes(s[i : i+8]))) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || !safeASCII[s[i]] {
			return false
		}
	}
	return true
}

func appendAttachment(b []byte, a Attachment) []byte {
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, a.Kind)
	if a.MediaType != "" {
		b = append(b, `,"mediaType":`...)
		b = appendJSONString(b, a.MediaType)
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(a.Size), 10)
	b = append(b, `,"sha256":"`...)
	b = append(b, a.SHA256...)
	b = append(b, '"')
	for _, f := range [...]struct{ k, v string }{{"uri", a.URI}, {"url", a.URL}, {"error", a.Error}, {"data", a.Data}} {
		if f.v != "" {
			b = append(b, `,"`...)
			b = append(b, f.k...)
			b = append(b, `":`...)
			b = appendJSONString(b, f.v)
		}
	}
	return append(b, '}')
}
