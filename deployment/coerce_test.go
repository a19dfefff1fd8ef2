package deployment

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// String inputs that are not strings become what Python's str() makes of
// them, checked against python3 itself; other types are left alone.
func TestCoerceStringsMatchesPython(t *testing.T) {
	values := []string{`1`, `1.5`, `-0.0`, `1e100`, `12345678901234567890`, `true`, `false`, `null`,
		`{"a": 1}`, `{"k": [1, "x"]}`, `["x", null, true]`, `"already"`, `"caf\u00e9 \u2603"`, `{"q": "it's \"q\""}`, `[]`, `{}`}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	script := "import json,sys\nfor line in sys.stdin:\n    v = json.loads(line)\n    print(json.dumps(v if isinstance(v, str) else str(v)))\n"
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(strings.Join(values, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, v := range values {
		d, err := Parse([]byte(`{"id": "x", "group": "g", "inputs": [` +
			`{"name": "s", "type": "String", "value": ` + v + `}, {"name": "j", "type": "Json", "value": ` + v + `}]}`))
		if err != nil {
			t.Fatal(err)
		}
		d.CoerceStrings()
		s, _ := d.Input("s")
		if got := jsondoc.Dumps(s); got != want[i] {
			t.Errorf("str(%s) = %s, python3 says %s", v, got, want[i])
		}
		if j, _ := d.Input("j"); jsondoc.Dumps(j) != jsondoc.Dumps(mustLoad(t, v)) {
			t.Errorf("a Json input %s was changed to %s", v, jsondoc.Dumps(j))
		}
	}
}

func mustLoad(t *testing.T, s string) jsondoc.Value {
	v, err := jsondoc.Loads([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCheckID(t *testing.T) {
	for id, ok := range map[string]bool{"3c9c1e9a-77a8-4d1c": true, "x.json": true, "": false, ".": false, "..": false,
		"../x": false, "a/b": false, "a\x00": false, "..x": true, "a:b c": true, "é": true,
		strings.Repeat("i", MaxIDBytes): true, strings.Repeat("i", MaxIDBytes+1): false,
		"new\nline": false, "tab\t": false, "\x1b[31m": false, "del\x7f": false} {
		if err := CheckID(id); (err == nil) != ok {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
}

// The redactor knows the credentials among the inputs: passwords and the
// like, and the signal URL whole and by its signature.
func TestRedactor(t *testing.T) {
	d, err := Parse([]byte(`{"id": "x", "group": "g", "inputs": [` +
		`{"name": "deploy_password", "value": "pa55-w0rd"}, {"name": "greeting", "value": "hello world"}, ` +
		`{"name": "deploy_signal_id", "value": "http://h/v1/signal/arn?Signature=S1g%2B"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := d.Redactor().Redact("pw pa55-w0rd; url http://h/v1/signal/arn?Signature=S1g%2B; query Signature=S1g%2B; hello world")
	if want := "pw ***; url ***; query ***; hello world"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
