package runparts

import (
	"sort"
	"strings"
)

// SortNumeric orders names as `LANG=C sort -n` does: by the number at the
// start of each name (none counts as 0), then bytewise.
func SortNumeric(names []string) {
	sort.SliceStable(names, func(i, j int) bool {
		if c := compareNumeric(names[i], names[j]); c != 0 {
			return c < 0
		}
		return names[i] < names[j]
	})
}

// numericPrefix splits the leading number of s as sort -n reads it:
// blanks, an optional minus, digits, an optional fraction.
func numericPrefix(s string) (neg bool, intPart, frac string) {
	s = strings.TrimLeft(s, " \t")
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart = strings.TrimLeft(s[:i], "0")
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac = strings.TrimRight(s[i+1:j], "0")
	}
	if intPart == "" && frac == "" {
		neg = false // -0 is 0
	}
	return neg, intPart, frac
}

func compareNumeric(a, b string) int {
	an, ai, af := numericPrefix(a)
	bn, bi, bf := numericPrefix(b)
	if an != bn {
		if an {
			return -1
		}
		return 1
	}
	c := compareMagnitude(ai, af, bi, bf)
	if an {
		return -c
	}
	return c
}

func compareMagnitude(ai, af, bi, bf string) int {
	if len(ai) != len(bi) {
		return cmpInt(len(ai), len(bi))
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	return strings.Compare(af, bf)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
