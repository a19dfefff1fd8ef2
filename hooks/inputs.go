package hooks

import (
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/secret"
)

// EnvValue is an input's value as an environment variable or a fact:
// a string as it is, a list or an object as JSON (the reference's
// json.dumps), a number or a boolean as JSON text ("1", "true"; the
// reference crashed), null or no value as "".
func EnvValue(v jsondoc.Value) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return jsondoc.Dumps(x)
	}
}

// StringOption is options[name] as the reference used a string option:
// "" unless it is true in Python's sense, else its text.
func StringOption(d *deployment.Deployment, name string) string {
	if v, _ := d.Option(name); !jsondoc.PyTruthy(v) {
		return ""
	}
	return d.OptionString(name)
}

// CheckVariable refuses a variable that cannot be in a tool's
// environment (the reference crashed on these, less helpfully).
func CheckVariable(name, value string) error {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return fmt.Errorf("input %q cannot be an environment variable: its name is empty or holds '=' or NUL", name)
	}
	if strings.ContainsRune(value, 0) {
		return fmt.Errorf("input %q cannot be an environment variable: its value holds NUL", name)
	}
	return nil
}

// LogValue is what a log line may show of the value of a variable or
// input called name: nothing of a credential, and a signal URL without
// its signature. Prefixed names (FACTER_deploy_password) count.
func LogValue(name, value string) string {
	if secret.SensitiveName(name) {
		return secret.Redacted
	}
	if strings.HasSuffix(name, "deploy_signal_id") {
		return secret.RedactURL(value)
	}
	return value
}
