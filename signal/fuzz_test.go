package signal

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// FuzzEncodeTrim encodes a hook's result under a limit: the fuzzed one
// (small, so inputs stay small), or Heat's MaxBody with the output
// repeated past it. Under the limit the body is json.dumps; over it, the
// body fits whenever emptying both outputs would, each output keeps its
// tail (the end says why a deployment failed), the other keys are
// untouched, the cuts add up, and no more is cut than needed.
func FuzzEncodeTrim(f *testing.F) {
	f.Add("line 1\nline 2\nfailed: because\n", "warning\n", 2, "extra", 120, false)
	f.Add(strings.Repeat("caf\u00e9 \U0001F600\t\"\\\n", 20), "\x00\x7f\u2028", 1, "", 64, false)
	f.Add("out", "err", 0, "deploy_stdout", 10, false)
	f.Add(strings.Repeat("x", 100), "", -1, "k", 950000, true)
	f.Add("é", "\U0001F600", 6, "x", 1, true)
	f.Fuzz(func(t *testing.T, stdout, stderr string, code int, key string, limit int, big bool) {
		if !utf8.ValidString(stdout) || !utf8.ValidString(stderr) || !utf8.ValidString(key) {
			return // signal data is decoded text (a hook's JSON, or its output decoded with U+FFFD)
		}
		if big {
			if stdout == "" {
				stdout = "x"
			}
			stdout = strings.Repeat(stdout, MaxBody/len(stdout)+1)
			limit = MaxBody
		} else if limit < 0 || limit > 1<<16 {
			return
		}
		data := jsondoc.NewObject(4)
		data.Set("deploy_stdout", stdout)
		data.Set("deploy_stderr", stderr)
		data.Set("deploy_status_code", jsondoc.Int(int64(code)))
		if key != "" {
			data.Set(key, key)
		}
		whole := jsondoc.Dumps(data)
		body, cuts := Encode(data, limit)
		if jsondoc.Dumps(data) != whole {
			t.Fatal("Encode changed its argument")
		}
		v, err := jsondoc.Loads(body)
		if err != nil {
			t.Fatalf("the body is not JSON: %v", err)
		}
		got := v.(*jsondoc.Object)
		if len(whole) <= limit {
			if string(body) != whole || cuts != nil {
				t.Fatalf("under the limit the body is not json.dumps: %s, %v", body, cuts)
			}
			return
		}
		emptied := jsondoc.NewObject(4)
		for i := 0; i < data.Len(); i++ {
			k, val := data.At(i)
			if _, ok := val.(string); ok && (k == "deploy_stdout" || k == "deploy_stderr") {
				val = ""
			}
			emptied.Set(k, val)
		}
		fits := len(jsondoc.Dumps(emptied)) <= limit
		if fits && len(body) > limit {
			t.Fatalf("%d bytes over the limit %d", len(body), limit)
		}
		removed := map[string]int{}
		for _, c := range cuts {
			removed[c.Key] += c.Bytes
		}
		kept := 0
		for i := 0; i < data.Len(); i++ {
			k, was := data.At(i)
			k2, now := got.At(i)
			if k2 != k {
				t.Fatalf("key %d is %q, was %q", i, k2, k)
			}
			s, isStr := was.(string)
			if !isStr || k != "deploy_stdout" && k != "deploy_stderr" {
				if jsondoc.Dumps(now) != jsondoc.Dumps(was) {
					t.Fatalf("%s changed: %s -> %s", k, jsondoc.Dumps(was), jsondoc.Dumps(now))
				}
				continue
			}
			tail := now.(string)
			if !strings.HasSuffix(s, tail) {
				t.Fatalf("%s: %q is not a tail of what the hook wrote", k, tail)
			}
			if cutLen := escapedLen(s) - escapedLen(tail); cutLen != removed[k] {
				t.Fatalf("%s: %d bytes cut, %d reported", k, cutLen, removed[k])
			}
			kept += len(tail)
		}
		// Each cut ends on the first character boundary past its share,
		// and a share is rounded up: at most 12 bytes too many each.
		if fits && kept > 0 && len(body) < limit-2*12 {
			t.Fatalf("%d bytes under the limit %d: cut more than needed (%v)", limit-len(body), limit, cuts)
		}
	})
}
