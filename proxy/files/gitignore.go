package files

import (
	"bufio"
	"io"
	"os"
	"path"
	"strings"
)

// maxIgnoreBytes bounds what is read of one .gitignore file.
const maxIgnoreBytes = 64 << 10

// rule is one pattern of a .gitignore file in folder base (relative to
// the listed directory, "" for the directory itself).
type rule struct {
	base     string
	segs     []string // the pattern split at "/"
	negate   bool
	dirOnly  bool
	anchored bool // the pattern had a "/" before its end: matched from base
}

// parseIgnore reads the rules of the .gitignore file at file (a regular
// file, at most maxIgnoreBytes read) for folder base.
func parseIgnore(file, base string) []rule {
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var rules []rule
	sc := bufio.NewScanner(io.LimitReader(f, maxIgnoreBytes))
	for sc.Scan() {
		if r, ok := parseRule(sc.Text(), base); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

// parseRule parses one line of a .gitignore file.
func parseRule(line, base string) (rule, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return rule{}, false
	}
	r := rule{base: base}
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\`) {
		line = line[1:] // \# and \! stand for themselves
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	if line == "" {
		return rule{}, false
	}
	r.segs = strings.Split(line, "/")
	return r, true
}

// ignored reports whether rel (relative to the listed directory, "/"
// separated) is ignored by rules, the last matching rule winning.
func ignored(rules []rule, rel string, dir bool) bool {
	ig := false
	for i := range rules {
		r := &rules[i]
		if r.dirOnly && !dir {
			continue
		}
		p := rel
		if r.base != "" {
			var ok bool
			if p, ok = strings.CutPrefix(rel, r.base+"/"); !ok {
				continue
			}
		}
		var m bool
		if r.anchored {
			m = matchSegs(r.segs, strings.Split(p, "/"))
		} else {
			m = matchSeg(r.segs[0], path.Base(p))
		}
		if m {
			ig = !r.negate
		}
	}
	return ig
}

// matchSegs matches a path's names against a pattern's, where "**"
// stands for any number of names.
func matchSegs(pat, names []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(names); i++ {
				if matchSegs(pat[1:], names[i:]) {
					return true
				}
			}
			return false
		}
		if len(names) == 0 || !matchSeg(pat[0], names[0]) {
			return false
		}
		pat, names = pat[1:], names[1:]
	}
	return len(names) == 0
}

// matchSeg matches one name against one pattern name (*, ?, […]); a bad
// pattern matches nothing.
func matchSeg(pat, name string) bool {
	ok, err := path.Match(pat, name)
	return err == nil && ok
}
