package script_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/script"
)

// A script printing 100 MB keeps the hook small: only the last MiB of
// each stream is kept. Measured on the hook's own process (peak RSS from
// wait4), not by timing.
func TestBigOutputKeepsTheTailInLittleMemory(t *testing.T) {
	f := setup(t)
	config := "#!/bin/sh\nyes 0123456789abcdef | head -c 100000000\necho THE-END\nyes err | head -c 100000000 >&2\necho ERR-END >&2\n"
	p := hooktest.RunProcess(t, `{"id": "1", "group": "script", "inputs": [], "config": `+jsonString(config)+`}`, f.environ(t, nil))
	if p.Code != 0 {
		t.Fatalf("exit %d: %s", p.Code, p.Stderr[:min(len(p.Stderr), 2000)])
	}
	res := p.JSON(t)
	stdout, _ := res["deploy_stdout"].(string)
	stderr, _ := res["deploy_stderr"].(string)
	if len(stdout) != hooks.MaxOutput || !strings.HasSuffix(stdout, "abcdefTHE-END\n") {
		t.Errorf("deploy_stdout: %d bytes, ending %q", len(stdout), stdout[max(0, len(stdout)-20):])
	}
	if len(stderr) != hooks.MaxOutput || !strings.HasSuffix(stderr, "err\nERR-END\n") {
		t.Errorf("deploy_stderr: %d bytes", len(stderr))
	}
	// The hook holds two 1 MiB tails, their copies in the result and its
	// JSON, and its log lines: a few MiB over the test binary's own (about
	// 20 MiB); keeping the output would take over 200 MiB.
	const limit = 40 << 20
	t.Logf("peak RSS of the hook: %.1f MiB", float64(p.MaxRSS)/(1<<20))
	if p.MaxRSS > limit && !hooktest.Race {
		t.Errorf("peak RSS %d MiB, want under %d MiB", p.MaxRSS>>20, limit>>20)
	}
}

// Past HEAT_CONFIG_HOOK_TIMEOUT the script is stopped, the deployment
// fails with 124 and deploy_stderr says why; the hook itself exits 0.
func TestScriptTimeout(t *testing.T) {
	f := setup(t)
	config := "#!/bin/sh\necho working\nsleep 30\n"
	start := time.Now()
	r := hooktest.Run(t, script.Hook, `{"id": "1", "group": "script", "inputs": [], "config": `+jsonString(config)+`}`,
		f.environ(t, nil, hooks.TimeoutVar+"=0.5"))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
	fn := f.working + "/1"
	want := `{"deploy_stdout": "working\n", "deploy_stderr": "` + fn + ` timed out after 0.5 seconds (HEAT_CONFIG_HOOK_TIMEOUT) and was stopped", "deploy_status_code": 124}`
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("exit %d\n got %s\nwant %s", r.Code, r.Stdout, want)
	}
}
