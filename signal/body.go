package signal

import (
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// MaxBody is the reference's cap on a signal body, in bytes: under
// Heat's max_json_body_size (1 MiB), which heat-api and heat-api-cfn
// answer with 413 beyond.
const MaxBody = 950000

// trimmedKeys are the values that give way, in this order: a hook's
// output, whose end says why it failed.
var trimmedKeys = []string{"deploy_stdout", "deploy_stderr"}

// Cut is what Encode removed from the start of one value, in serialised
// bytes.
type Cut struct {
	Key   string
	Bytes int
}

// Encode serialises data as Python's json.dumps does (", " and ": ",
// non-ASCII escaped). Above limit bytes, it cuts the start of
// deploy_stdout and deploy_stderr, each in proportion to its serialised
// size, so that their tails survive and the body fits. The reference
// meant to do this but crashed instead (and counted characters, not
// bytes); a value that is absent or not a string is left alone here. If
// even emptying both does not make it fit, the body is over limit: the
// caller can tell by its length. data itself is not changed.
func Encode(data jsondoc.Value, limit int) ([]byte, []Cut) {
	obj, ok := data.(*jsondoc.Object)
	size := jsondoc.DumpsLen(data)
	if size <= limit || !ok {
		return []byte(jsondoc.Dumps(data)), nil
	}
	// Too long: the whole text is never built (a 100 MB hook output
	// costs no copy of it), only measured; the trimmed one is.
	vals := map[string]string{}
	for _, k := range trimmedKeys {
		if v, ok := obj.Get(k); ok {
			if s, ok := v.(string); ok && s != "" {
				vals[k] = s
			}
		}
	}
	cut := map[string]int{}
	// One round is exact; more only guard against an encoder that counts
	// differently from escapedLen.
	var body string
	for round := 0; round < 4 && size > limit; round++ {
		excess, total := int64(size-limit), int64(0)
		for _, s := range vals {
			total += int64(escapedLen(s))
		}
		if total == 0 {
			break
		}
		for _, k := range trimmedKeys {
			s, ok := vals[k]
			if !ok {
				continue
			}
			size := int64(escapedLen(s))
			want := (excess*size + total - 1) / total // rounded up: the shares add up to the excess
			n, removed := cutPoint(s, int(want))
			vals[k], cut[k] = s[n:], cut[k]+removed
		}
		body = jsondoc.Dumps(withValues(obj, vals))
		size = len(body)
	}
	if body == "" { // nothing to trim: over limit as it is
		body = jsondoc.Dumps(data)
	}
	var cuts []Cut
	for _, k := range trimmedKeys {
		if cut[k] > 0 {
			cuts = append(cuts, Cut{Key: k, Bytes: cut[k]})
		}
	}
	return []byte(body), cuts
}

// withValues is a copy of obj with some string values replaced.
func withValues(obj *jsondoc.Object, vals map[string]string) *jsondoc.Object {
	out := jsondoc.NewObject(obj.Len())
	for i := range obj.Len() {
		k, v := obj.At(i)
		if s, ok := vals[k]; ok {
			v = s
		}
		out.Set(k, v)
	}
	return out
}

// escapedLen is the length of s serialised by jsondoc.Dumps, quotes left
// out.
func escapedLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		w, size := escapedRune(s[i:])
		n, i = n+w, i+size
	}
	return n
}

// cutPoint is the shortest prefix of s, ending on a character boundary,
// whose serialised length is at least want: its end in s, and that
// serialised length.
func cutPoint(s string, want int) (end, removed int) {
	for end < len(s) && removed < want {
		w, size := escapedRune(s[end:])
		removed, end = removed+w, end+size
	}
	return end, removed
}

// escapedRune is how many bytes the first character of s takes once
// escaped with ensure_ascii, and how many it takes in s.
func escapedRune(s string) (escaped, size int) {
	c := s[0]
	switch {
	case c >= 0x20 && c < 0x7f && c != '"' && c != '\\':
		return 1, 1
	case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
		return 2, 1
	case c < utf8.RuneSelf:
		return 6, 1 // \u00XX
	}
	r, size := utf8.DecodeRuneInString(s)
	if r > 0xffff {
		return 12, size // a surrogate pair
	}
	return 6, size
}
