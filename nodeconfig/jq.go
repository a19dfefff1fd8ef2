package nodeconfig

import (
	"math"
	"strconv"
	"strings"
)

// JQNumber prints a double as jq (1.5 and 1.6) does: the shortest
// digits that read back, positional unless the point is 4 or more
// places left of them or more than 15 places right of their end
// (1e+16, but 15000000000000000); infinities as the largest double.
func JQNumber(f float64) string {
	if math.IsInf(f, 0) {
		f = math.Copysign(math.MaxFloat64, f)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	ds := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1
	switch {
	case f == 0:
		return sign + "0"
	case decpt <= -4 || decpt > len(ds)+15:
		out := ds[:1]
		if len(ds) > 1 {
			out += "." + ds[1:]
		}
		e := decpt - 1
		esign := "+"
		if e < 0 {
			esign, e = "-", -e
		}
		es := strconv.Itoa(e)
		if len(es) < 2 {
			es = "0" + es
		}
		return sign + out + "e" + esign + es
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + ds
	case decpt >= len(ds):
		return sign + ds + strings.Repeat("0", decpt-len(ds))
	default:
		return sign + ds[:decpt] + "." + ds[decpt:]
	}
}
