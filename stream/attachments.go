package stream

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// flatten turns a content array (or a single content block) into plain text
// and the attachments taken out of it. Text parts are kept in order and
// joined with "\n"; every other part leaves a short placeholder in the text.
func (n *Normalizer) flatten(content gjson.Result) (string, []Attachment) {
	var parts []string
	var atts []Attachment
	each := func(_, block gjson.Result) bool {
		text, att, ok := n.part(block)
		parts = append(parts, text)
		if ok {
			atts = append(atts, att)
		}
		return true
	}
	if content.IsObject() {
		each(gjson.Result{}, content)
	} else {
		content.ForEach(each)
	}
	return strings.Join(parts, "\n"), atts
}

// part returns the text standing for one content block and, for a non-text
// block, its attachment.
func (n *Normalizer) part(block gjson.Result) (string, Attachment, bool) {
	if !block.IsObject() {
		if block.Type == gjson.String {
			return n.str(block), Attachment{}, false
		}
		return string(n.origRaw(block)), Attachment{}, false
	}
	typ := n.get(block, "type")
	switch typ {
	case "text":
		return n.str(block.Get("text")), Attachment{}, false
	case "image", "audio", "document":
		// Anthropic form {source:{type:"base64",media_type,data}} or
		// {source:{type:"url",url}}; MCP form {data, mimeType}.
		src := block.Get("source")
		if src.Exists() {
			if n.get(src, "type") == "url" {
				url := n.get(src, "url")
				return fmt.Sprintf("[%s %s]", typ, url), Attachment{Kind: typ, URL: url}, true
			}
			return n.binary(typ, n.get(src, "media_type"), "", src.Get("data"))
		}
		return n.binary(typ, n.get(block, "mimeType"), "", block.Get("data"))
	case "resource":
		res := block.Get("resource")
		uri := n.get(res, "uri")
		if t := res.Get("text"); t.Exists() {
			return n.str(t), Attachment{}, false
		}
		return n.binary("resource", n.get(res, "mimeType"), uri, res.Get("blob"))
	case "resource_link":
		name, uri := n.get(block, "name"), n.get(block, "uri")
		if name == "" || name == uri {
			return fmt.Sprintf("[resource link] %s", uri), Attachment{}, false
		}
		return fmt.Sprintf("[resource link: %s] %s", name, uri), Attachment{}, false
	}
	// Any other block: described in the text, kept whole as JSON.
	if typ == "" {
		typ = "block"
	}
	raw := n.origRaw(block)
	att := n.describe(typ, "application/json", "", raw)
	att.Data = ""
	if n.opts.Attachments == AttachInline {
		att.Data = base64.StdEncoding.EncodeToString(raw)
	}
	n.store(&att, raw)
	n.collect(att)
	return placeholder(att), att, true
}

// binary makes the attachment of a base64-encoded part. The same data seen
// earlier in the event (the CLI prints each image twice) is not decoded and
// hashed again.
func (n *Normalizer) binary(kind, mediaType, uri string, data gjson.Result) (string, Attachment, bool) {
	enc := n.str(data)
	for _, d := range n.ev.decoded {
		if d.data == enc && d.att.Kind == kind && d.att.MediaType == mediaType && d.att.URI == uri {
			return placeholder(d.att), d.att, true
		}
	}
	att := n.binaryAttachment(kind, mediaType, uri, enc)
	n.ev.decoded = append(n.ev.decoded, decoded{data: enc, att: att})
	n.collect(att)
	return placeholder(att), att, true
}

func (n *Normalizer) binaryAttachment(kind, mediaType, uri, enc string) Attachment {
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

// decode decodes standard base64 (padding optional, line breaks ignored)
// into the Normalizer's scratch buffer.
func (n *Normalizer) decode(s string) ([]byte, error) {
	enc := base64.StdEncoding
	if len(s)%4 != 0 && !strings.ContainsAny(s, "=\r\n") {
		enc = base64.RawStdEncoding
	}
	need := enc.DecodedLen(len(s))
	if cap(n.scratch) < need || cap(n.scratch) > retainBytes && need <= retainBytes {
		n.scratch = make([]byte, need)
	}
	k, err := enc.Decode(n.scratch[:need], sbytes(s))
	if err != nil {
		return nil, err
	}
	return n.scratch[:k], nil
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

// attachmentsJSON encodes a list of attachments.
func attachmentsJSON(atts []Attachment) []byte {
	b := []byte{'['}
	for i, a := range atts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAttachment(b, a)
	}
	return append(b, ']')
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
