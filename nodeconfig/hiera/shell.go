package hiera

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/nodeconfig"
)

// What the reference's bash and jq do to a value on its way into a data
// file, reproduced so that our bytes are its bytes: the command
// substitution, `echo -e`, `grep -c '$'`, and jq's pretty printing.

// substituted is s as $(...) leaves a command's output: trailing newlines
// gone, and NUL bytes, which bash cannot hold, dropped.
func substituted(s string) string {
	return strings.TrimRight(strings.ReplaceAll(s, "\x00", ""), "\n")
}

// lines counts lines as grep -c '$' does: a last line without its
// newline counts too.
func lines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// echoEArg is what bash's `echo -e "$s"` prints, without the newline it
// adds; stop tells that there is no newline. A word of options only
// (-n, -e, -E, -neE...) is taken as options: nothing is printed, and no
// newline either when -n is among them.
func echoEArg(s string) (out string, stop bool) {
	if len(s) > 1 && s[0] == '-' && strings.Trim(s[1:], "neE") == "" {
		return "", strings.Contains(s, "n")
	}
	return echoE(s)
}

// echoE is what bash's `echo -e` prints of s, without the newline it
// adds; stop tells that a \c ended the output there (no newline either).
func echoE(s string) (out string, stop bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\':
			b.WriteByte('\\')
		case 'c':
			return b.String(), true
		case '0':
			v, n := digits(s[i+1:], 3, 8)
			b.WriteByte(byte(v))
			i += n
		case 'x':
			v, n := digits(s[i+1:], 2, 16)
			if n == 0 {
				b.WriteString(`\x`)
			} else {
				b.WriteByte(byte(v))
			}
			i += n
		case 'u', 'U':
			max := 4
			if e == 'U' {
				max = 8
			}
			v, n := digits(s[i+1:], max, 16)
			switch {
			case n == 0:
				b.WriteByte('\\')
				b.WriteByte(e)
			case v < 0x80:
				b.WriteByte(byte(v))
			default:
				b.WriteString(string(rune(v)))
			}
			i += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), false
}

// digits reads up to max digits of base at the start of s.
func digits(s string, max, base int) (v, n int) {
	for n < max && n < len(s) {
		d, err := strconv.ParseUint(s[n:n+1], base, 8)
		if err != nil {
			break
		}
		v = v*base + int(d)
		n++
	}
	return v, n
}

// jqPretty prints v as jq 1.6 does with -a: two-space indentation, keys
// in their order, non-ASCII escaped, numbers as doubles.
func jqPretty(v jsondoc.Value) string {
	var b strings.Builder
	writeJQ(&b, v, 0)
	return b.String()
}

func writeJQ(b *strings.Builder, v jsondoc.Value, depth int) {
	indent := func(d int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", d))
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeJQString(b, x)
	case jsondoc.Number:
		f := x.Float
		if !x.IsFloat {
			f, _ = strconv.ParseFloat(x.Text, 64) // ±Inf beyond a double, as jq
		}
		b.WriteString(nodeconfig.JQNumber(f))
	case []jsondoc.Value:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			writeJQ(b, it, depth+1)
		}
		indent(depth)
		b.WriteByte(']')
	case *jsondoc.Object:
		if x.Len() == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i := 0; i < x.Len(); i++ {
			k, it := x.At(i)
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			writeJQString(b, k)
			b.WriteString(": ")
			writeJQ(b, it, depth+1)
		}
		indent(depth)
		b.WriteByte('}')
	}
}

func writeJQString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, string(utf8.RuneError)) {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u` + hex4(int(r)))
		case r < 0x80:
			b.WriteRune(r)
		case r < 0x10000:
			b.WriteString(`\u` + hex4(int(r)))
		default:
			r -= 0x10000
			b.WriteString(`\u` + hex4(0xd800+int(r>>10)) + `\u` + hex4(0xdc00+int(r&0x3ff)))
		}
	}
	b.WriteByte('"')
}

func hex4(v int) string {
	s := strconv.FormatInt(int64(v), 16)
	return strings.Repeat("0", 4-len(s)) + s
}
