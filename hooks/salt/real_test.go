package salt_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/salt"
)

// The reference test's three states through a real salt-call (skipped
// when it is not installed, as on this project's machines: Debian has no
// salt package; REQUIRE_REAL_TOOLS=1 makes that a failure). The answers
// the fake gives in salt_test.go are meant to be these.
func TestRealSalt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs salt-call")
	}
	if _, err := exec.LookPath("salt-call"); err != nil {
		if os.Getenv("REQUIRE_REAL_TOOLS") == "1" {
			t.Fatal("salt-call is not installed (REQUIRE_REAL_TOOLS=1)")
		}
		t.Skip("salt-call is not installed")
	}
	for _, tc := range []struct {
		sls    string
		status float64
		want   string
	}{
		{slsok, 0, "foo: bar"},
		{slsfail, 2, "was not found in SLS"},
		{slsnotallowed, 2, "result: false"},
	} {
		f := setup(t)
		env := append(os.Environ(), "HEAT_SALT_WORKING="+f.working, "SALT_MINION_CONFIG="+f.minion)
		r := hooktest.Run(t, salt.Hook, data(tc.sls), env)
		res := r.JSON(t)
		out, _ := res["deploy_stdout"].(string)
		errText, _ := res["deploy_stderr"].(string)
		if res["deploy_status_code"] != tc.status || !strings.Contains(out+errText, tc.want) {
			t.Errorf("%q: result %s\n%s", tc.want, r.Stdout, r.Stderr)
		}
	}
}
