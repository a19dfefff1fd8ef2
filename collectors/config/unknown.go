package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Unknown is a key of a configuration file that no option reads: a typo
// ("polling-interval", which a file does not read as polling_interval),
// a section there is not, an option of another section. oslo.config
// ignores it without a word; its program may say so.
type Unknown struct {
	File, Section, Key string
	// Nearest is the known key nearest it, "polling_interval" in the same
	// section, "[local] path" in another; "" when none is near.
	Nearest string
}

// String is the warning: the key, its section and its file, never its
// value (it may be a password under a misspelt name).
func (u Unknown) String() string {
	s := fmt.Sprintf("Unknown option %s in [%s] of %s: ignored", printable(u.Key), printable(u.Section), printable(u.File))
	if u.Nearest != "" {
		s += " (the nearest known option is " + printable(u.Nearest) + ")"
	}
	return s + "."
}

// printable quotes a name that holds characters a log line should not
// (a line break, an escape sequence).
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// nearest is the known key of a file closest to key in section: fewest
// edits, once case and "-" are set aside, to its spelling in files, a
// deprecated one, or its command-line name ("print" is print_only), the
// same section first, then the options' order; "" when even that one is
// more than a third of the key away (no suggestion beats a wrong one).
func (s *Set) nearest(section, key string) string {
	if len(key) > 200 {
		return "" // no option's name is near; and the edits would cost
	}
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	// A candidate is a spelling to match and the key it stands for.
	type candidate struct{ group, dest, match string }
	var cands []candidate
	for i := range s.Options {
		o := &s.Options[i]
		g := o.groupName()
		dest := strings.TrimPrefix(o.key(), g+".")
		cands = append(cands, candidate{g, dest, norm(dest)}, candidate{g, dest, norm(o.Name)})
		for _, a := range o.Aliases {
			cands = append(cands, candidate{g, norm(a), norm(a)})
		}
	}
	for _, k := range s.Accepted {
		if g, d, ok := strings.Cut(k, "."); ok {
			cands = append(cands, candidate{g, d, norm(d)})
		}
	}
	want := norm(key)
	best, bestScore := candidate{}, -1
	for _, c := range cands {
		score := 2 * editDistance(want, c.match)
		if c.group != section {
			score++
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore = c, score
		}
	}
	if bestScore < 0 || bestScore/2 > max(1, len([]rune(want))/3) {
		return ""
	}
	if best.group == section {
		return best.dest
	}
	return "[" + best.group + "] " + best.dest
}

// editDistance counts the insertions, deletions, substitutions and
// swaps of two neighbours that make a into b, in runes (the optimal
// string alignment distance: "nmae" is one edit from "name").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the table: two back, one back, this one.
	pp, prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(rb)]
}
