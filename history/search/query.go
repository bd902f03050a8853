package search

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Query is what Search looks for.
type Query struct {
	// Text: every word must be in a part (case and accents ignored); the
	// last word also matches the start of a word.
	Text string
	// Project keeps only the sessions of this directory ("" every one).
	Project string
	// Limit is the number of sessions (default 20).
	Limit int
	// Matches is the number of matches per session (default 3).
	Matches int
}

// Span is a [Start, End) range of a snippet in UTF-16 code units.
type Span struct{ Start, End int }

// Match is one matching part of a session.
type Match struct {
	UUID, Time, Role string
	Snippet          string
	Highlights       []Span
}

// Hit is one session that matched.
type Hit struct {
	ID, Project, Title string
	Updated            time.Time
	Matches            []Match
}

// Result is what Search found.
type Result struct {
	Hits []Hit
	// More says more sessions matched than the limit.
	More bool
	// Indexed counts the sessions in the index.
	Indexed int
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// ftsQuery makes an FTS5 query of the words: each quoted (they hold only
// letters and digits), all required, the last also as a prefix.
func ftsQuery(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(`"` + w + `"`)
		if i == len(words)-1 && utf8.RuneCountInString(w) >= 2 {
			b.WriteByte('*')
		}
	}
	return b.String()
}

type docHit struct {
	id   int64
	ts   string
	role string
	uuid string
}

// Search brings the index up to date, then returns the sessions that
// match q, newest (by Updated) first, each with its newest matches.
func (x *Index) Search(ctx context.Context, q Query) (Result, error) {
	words := queryWords(q.Text)
	if len(words) == 0 {
		return Result{}, ErrBadQuery
	}
	if q.Limit <= 0 {
		q.Limit = 20
	}
	if q.Matches <= 0 {
		q.Matches = 3
	}
	if q.Project != "" {
		q.Project = filepath.Clean(q.Project)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.updateLocked(ctx); err != nil {
		return Result{}, err
	}
	r, err := x.query(ctx, q, words)
	if corrupt(err) {
		x.o.Logger.Warn("the history search index is corrupt: rebuilding it", "path", x.path, "err", err)
		if err = x.recreate(); err == nil {
			if err = x.update(ctx); err == nil {
				r, err = x.query(ctx, q, words)
			}
		}
	}
	return r, err
}

// query runs q on the index. x.mu is held.
func (x *Index) query(ctx context.Context, q Query, words []string) (Result, error) {
	match := ftsQuery(words)
	rows, err := x.db.QueryContext(ctx, `SELECT d.id, d.file, d.ts, d.role, d.uuid FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?`, match)
	if err != nil {
		return Result{}, err
	}
	// Per session, its newest q.Matches parts (bounded by the sessions).
	byFile := map[int64][]docHit{}
	for rows.Next() {
		var d docHit
		var file int64
		if err := rows.Scan(&d.id, &file, &d.ts, &d.role, &d.uuid); err != nil {
			rows.Close()
			return Result{}, err
		}
		s, ok := x.byID[file]
		if !ok || q.Project != "" && s.project != q.Project {
			continue
		}
		hs := append(byFile[file], d)
		slices.SortFunc(hs, func(a, b docHit) int { return cmp.Or(strings.Compare(b.ts, a.ts), cmp.Compare(b.id, a.id)) })
		if len(hs) > q.Matches {
			hs = hs[:q.Matches]
		}
		byFile[file] = hs
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Result{}, err
	}
	files := make([]int64, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b int64) int {
		sa, sb := x.byID[a], x.byID[b]
		return cmp.Or(sb.updated().Compare(sa.updated()), strings.Compare(sb.session, sa.session))
	})
	res := Result{Indexed: len(x.files)}
	text, err := x.db.PrepareContext(ctx, `SELECT text FROM fts WHERE rowid = ?`)
	if err != nil {
		return Result{}, err
	}
	defer text.Close()
	for _, f := range files {
		if len(res.Hits) == q.Limit {
			res.More = true
			break
		}
		s := x.byID[f]
		h := Hit{ID: s.session, Project: s.project, Title: x.o.Scrub(s.title()), Updated: s.updated()}
		for _, d := range byFile[f] {
			var t string
			if err := text.QueryRowContext(ctx, d.id).Scan(&t); err != nil {
				return Result{}, err
			}
			snippet, spans, ok := x.snippet(t, words)
			if !ok {
				continue // the words were a secret's, masked since
			}
			h.Matches = append(h.Matches, Match{UUID: d.uuid, Time: d.ts, Role: d.role, Snippet: snippet, Highlights: spans})
		}
		if len(h.Matches) > 0 {
			res.Hits = append(res.Hits, h)
		}
	}
	return res, nil
}

// Snippet bounds, in bytes of text before and after the first match.
const (
	snippetBefore = 60
	snippetAfter  = 180
)

// snippet masks text with the Scrub in force and cuts it around the first
// word found: white space collapsed, "…" where cut, the words' spans in
// UTF-16 units. ok is false when masking took away every word found (a
// secret, masked since it was indexed): that match is dropped.
func (x *Index) snippet(text string, words []string) (string, []Span, bool) {
	scrubbed := x.o.Scrub(text)
	found := findWords(scrubbed, words)
	if len(found) == 0 && scrubbed != text {
		return "", nil, false
	}
	from, to := 0, min(len(scrubbed), snippetAfter)
	if len(found) > 0 {
		from = max(0, found[0][0]-snippetBefore)
		to = min(len(scrubbed), found[0][0]+snippetAfter)
	}
	for from > 0 && !utf8.RuneStart(scrubbed[from]) {
		from--
	}
	for to < len(scrubbed) && !utf8.RuneStart(scrubbed[to]) {
		to++
	}
	// Cut at white space where there is some near.
	if from > 0 {
		if i := strings.IndexFunc(scrubbed[from:found[0][0]], unicode.IsSpace); i >= 0 {
			from += i
		}
	}
	if to < len(scrubbed) {
		if i := strings.LastIndexFunc(scrubbed[from:to], unicode.IsSpace); i > 0 && (len(found) == 0 || from+i > found[0][1]) {
			to = from + i
		}
	}
	var b strings.Builder
	var spans []Span
	u16 := 0
	if from > 0 {
		b.WriteString("…")
		u16++
	}
	space := false
	k := 0 // the next found range
	start := -1
	for i, r := range scrubbed[from:to] {
		i += from
		for k < len(found) && found[k][1] <= i {
			k++
		}
		if k < len(found) && found[k][0] == i {
			start = u16
		}
		if unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
				u16++
			}
			space = true
		} else {
			space = false
			b.WriteRune(r)
			u16 += utf16.RuneLen(r)
		}
		if start >= 0 && k < len(found) && i+utf8.RuneLen(r) == found[k][1] {
			spans = append(spans, Span{start, u16})
			start = -1
		}
	}
	out := strings.TrimRight(b.String(), " ")
	if to < len(scrubbed) {
		out += "…"
	}
	return out, spans, true
}

// findWords finds the words of a query in text as byte ranges, as FTS5's
// tokenizer would: a whole word (letters and digits), or the start of one
// for the last word; case ignored.
func findWords(text string, words []string) [][2]int {
	var out [][2]int
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			j += n
		}
		tok := strings.ToLower(text[i:j])
		for k, w := range words {
			if tok == w || k == len(words)-1 && strings.HasPrefix(tok, w) {
				end := j
				if tok != w && k == len(words)-1 {
					end = i + len(w) // a prefix: highlight what was typed
					if strings.ToLower(text[i:end]) != w {
						end = j
					}
				}
				out = append(out, [2]int{i, end})
				break
			}
		}
		i = j
	}
	return out
}
