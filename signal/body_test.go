package signal

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func obj(kv ...any) *jsondoc.Object {
	o := jsondoc.NewObject(len(kv) / 2)
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// lines is n numbered lines of width bytes each (newline included), so a
// kept tail can be recognised.
func lines(prefix string, n, width int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		l := fmt.Sprintf("%s %08d ", prefix, i)
		b.WriteString(l + strings.Repeat(".", width-len(l)-1) + "\n")
	}
	return b.String()
}

func get(t *testing.T, body []byte, key string) string {
	t.Helper()
	v, err := jsondoc.Loads(body)
	if err != nil {
		t.Fatalf("the trimmed body is not JSON: %v", err)
	}
	s, _ := v.(*jsondoc.Object).Get(key)
	str, _ := s.(string)
	return str
}

func TestEncodeUnderTheLimitIsJSONDumps(t *testing.T) {
	for _, tc := range []struct {
		data jsondoc.Value
		want string
	}{
		{obj("foo", "bar"), `{"foo": "bar"}`},
		{obj("deploy_stdout", "caf\u00e9 \U0001F600\n", "deploy_status_code", jsondoc.Int(0)), `{"deploy_stdout": "caf\u00e9 \ud83d\ude00\n", "deploy_status_code": 0}`},
		{obj(), `{}`},
		{[]jsondoc.Value{jsondoc.Int(1), "x"}, `[1, "x"]`},
	} {
		if got, cuts := Encode(tc.data, MaxBody); string(got) != tc.want || cuts != nil {
			t.Errorf("got %s %v, want %s", got, cuts, tc.want)
		}
	}
}

// Golden: a 2 MB stdout and a 0.5 MB stderr fit in 950000 bytes, each cut
// from its start in proportion to its size, their tails whole.
func TestEncodeTrimKeepsTailsInProportion(t *testing.T) {
	stdout, stderr := lines("out", 2_000_000/50, 50), lines("err", 500_000/50, 50)
	data := obj("deploy_stdout", stdout, "deploy_stderr", stderr, "deploy_status_code", jsondoc.Int(2))
	body, cuts := Encode(data, MaxBody)
	if len(body) > MaxBody {
		t.Fatalf("%d bytes, over %d", len(body), MaxBody)
	}
	out, errs := get(t, body, "deploy_stdout"), get(t, body, "deploy_stderr")
	if !strings.HasSuffix(stdout, out) || !strings.HasSuffix(stderr, errs) {
		t.Fatal("what is left is not the tail")
	}
	if s, _ := data.Get("deploy_stdout"); s != stdout {
		t.Fatal("Encode changed its argument")
	}
	var summary strings.Builder
	fmt.Fprintf(&summary, "body: %d bytes (limit %d)\n", len(body), MaxBody)
	for _, c := range cuts {
		fmt.Fprintf(&summary, "cut %s: %d bytes\n", c.Key, c.Bytes)
	}
	fmt.Fprintf(&summary, "cut ratio stdout/stderr: %.3f (size ratio %.3f)\n",
		float64(cuts[0].Bytes)/float64(cuts[1].Bytes), float64(escapedLen(stdout))/float64(escapedLen(stderr)))
	fmt.Fprintf(&summary, "deploy_stdout kept %d of %d, starts %q, ends %q\n", len(out), len(stdout), out[:40], out[len(out)-40:])
	fmt.Fprintf(&summary, "deploy_stderr kept %d of %d, starts %q, ends %q\n", len(errs), len(stderr), errs[:40], errs[len(errs)-40:])
	golden(t, "trim.golden", summary.String())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("got:\n%s\nwant (%s):\n%s", got, path, want)
	}
}

// What the reference crashed on (a missing key, a value that is not a
// string) is trimmed as far as it can be; nothing panics.
func TestEncodeTrimOddShapes(t *testing.T) {
	big := strings.Repeat("x", 300)
	escapes := strings.Repeat("\"\\\n\u00e9\U0001F600\x01", 40) // 2, 2, 2, 6, 12 and 6 bytes each
	for _, tc := range []struct {
		name     string
		data     jsondoc.Value
		wantFits bool
		kept     map[string]string // key -> the full value whose tail must be kept
	}{
		{"no deploy_stderr", obj("deploy_stdout", big), true, map[string]string{"deploy_stdout": big}},
		{"no deploy_stdout", obj("deploy_stderr", big), true, map[string]string{"deploy_stderr": big}},
		{"stdout not a string", obj("deploy_stdout", jsondoc.Int(7), "deploy_stderr", big), true, map[string]string{"deploy_stderr": big}},
		{"null stderr", obj("deploy_stdout", big, "deploy_stderr", nil), true, map[string]string{"deploy_stdout": big}},
		{"escapes and wide characters", obj("deploy_stdout", escapes, "deploy_stderr", escapes), true,
			map[string]string{"deploy_stdout": escapes, "deploy_stderr": escapes}},
		{"nothing to trim", obj("other", big), false, nil},
		{"not an object", []jsondoc.Value{big}, false, nil},
		{"too big even emptied", obj("deploy_stdout", big, "other", big), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 200
			body, _ := Encode(tc.data, limit)
			if fits := len(body) <= limit; fits != tc.wantFits {
				t.Fatalf("%d bytes, fits %v, want %v: %s", len(body), fits, tc.wantFits, body)
			}
			if _, err := jsondoc.Loads(body); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			for k, full := range tc.kept {
				if got := get(t, body, k); got == "" || !strings.HasSuffix(full, got) {
					t.Errorf("%s: %q is not a tail of the value", k, got)
				}
			}
			if len(body) <= limit && limit-len(body) > 2*12+2 {
				t.Errorf("%d bytes: cut %d more than needed", len(body), limit-len(body))
			}
		})
	}
}
