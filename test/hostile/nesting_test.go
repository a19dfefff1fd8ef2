package hostile

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deep is 100,000 levels: far past every recursion limit (Python's ~1000,
// our decoders' 10,000), deep enough to overflow a recursive parser's
// stack.
const deep = 100_000

// inputCase is one program run on hostile input laid out under a work
// dir w: the exit status docs/exit-codes.md gives, the one error line
// (its words; W is the work dir), and where the run may write.
type inputCase struct {
	name    string
	setup   func(t *testing.T, w string) (env []string, stdin []byte, program string, args []string)
	code    int
	errLine string   // the one line holding the error's words; "": none
	word    string   // what marks an error line of this program
	writes  []string // work dir paths the run may create
	check   func(t *testing.T, w string, r result)
}

// Nesting 100,000 levels deep in every input a program parses: one error
// line naming the file (or stdin), no stack overflow, nothing written
// but what the program records of the failure.
func TestDeepNesting(t *testing.T) {
	runInputCases(t, []inputCase{
		{name: "os-apply-config metadata, lists", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			write(t, w+"/md.json", string(nested(deep, false)), 0o644)
			write(t, w+"/t/etc/foo", "{{x}}", 0o644)
			return nil, nil, "os-apply-config", []string{"-t", w + "/t", "-o", w + "/out", "-m", w + "/md.json"}
		}, code: 1, word: "[ERROR]", errLine: "Could not parse metadata file: W/md.json: nested too deeply: line 1 column"},
		{name: "os-apply-config metadata, objects", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			write(t, w+"/md.json", string(nested(deep, true)), 0o644)
			return nil, nil, "os-apply-config", []string{"--key", "x", "-m", w + "/md.json"}
		}, code: 1, word: "[ERROR]", errLine: "Could not parse metadata file: W/md.json: nested too deeply: line 1 column"},
		{name: "os-apply-config .oac YAML", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			write(t, w+"/md.json", `{"x": 1}`, 0o644)
			write(t, w+"/t/etc/foo", "{{x}}", 0o644)
			write(t, w+"/t/etc/foo.oac", "mode: "+strings.Repeat("[", deep)+strings.Repeat("]", deep)+"\n", 0o644)
			return nil, nil, "os-apply-config", []string{"-t", w + "/t", "-o", w + "/out", "-m", w + "/md.json"}
		}, code: 1, word: "[ERROR]", errLine: "('invalid YAML: exceeded max depth of 10000', 'W/t/etc/foo')"},
		{name: "os-collect-config local file", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			write(t, w+"/local/deep", string(nested(deep, false)), 0o600)
			write(t, w+"/local/good", `{"good": 1}`, 0o600)
			return occEnv(w), nil, "os-collect-config", occArgs(w, "local")
		}, code: 0, word: "not valid JSON", errLine: "W/local/deep is not valid JSON (Nested too deeply: line 1 column",
			writes: []string{"cache/", "backup/", "status/"}, check: func(t *testing.T, w string, r result) {
				if _, err := os.Stat(w + "/cache/good.json.last"); err != nil {
					t.Errorf("the good file was not collected: %v", err)
				}
			}},
		{name: "os-collect-config request body", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			return occEnv(w), nil, "os-collect-config", append(occArgs(w, "request"), "--request-metadata-url", serve(t, nested(deep, true)))
		}, code: 0, word: "Failed to parse", errLine: "Failed to parse as json. (Nested too deeply: line 1 column",
			writes: []string{"status/"}, check: func(t *testing.T, w string, r result) {
				if len(r.lines("Source [request] Unavailable.")) != 1 {
					t.Errorf("the source is not said to be unavailable:\n%s", r.stderr)
				}
			}},
		{name: "55-heat-config deployments", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			write(t, w+"/heat-config", `[{"id": "d", "group": "script", "inputs": [], "config": `+string(nested(deep, false))+`}]`, 0o600)
			return hcEnv(w), nil, "55-heat-config", nil
		}, code: 0, word: "[ERROR]", errLine: "W/heat-config: invalid deployment: Nested too deeply: line 1 column",
			writes: []string{"deployed/"}},
		{name: "script hook stdin", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			return hcEnv(w), []byte(`{"id": "d", "group": "script", "inputs": [], "config": ` + string(nested(deep, false)) + `}`), "script", nil
		}, code: 1, word: "[ERROR]", errLine: "invalid deployment on stdin: Nested too deeply: line 1 column"},
		{name: "heat-config-notify deployment file", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			write(t, w+"/d.json", `{"id": "d", "group": "script", "inputs": [], "config": `+string(nested(deep, false))+`}`, 0o600)
			return nil, []byte("{}"), "heat-config-notify", []string{w + "/d.json"}
		}, code: 1, word: "[ERROR]", errLine: "Cannot read config file: W/d.json: invalid deployment: Nested too deeply: line 1 column"},
	})
}

// runInputCases runs each case in a work dir of its own.
func runInputCases(t *testing.T, cases []inputCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := t.TempDir()
			env, stdin, program, args := tc.setup(t, w)
			before := tree(t, w)
			r := run(t, env, stdin, program, args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.code, tail(r.stderr))
			}
			got := r.lines(tc.word)
			if tc.errLine == "" && len(got) > 0 {
				t.Errorf("error lines %q\n%s", short(got), tail(r.stderr))
			}
			if tc.errLine != "" && (len(got) != 1 || !strings.Contains(got[0], strings.ReplaceAll(tc.errLine, "W/", w+"/"))) {
				t.Errorf("error lines %q\nwant one holding %q\n%s", short(got), tc.errLine, tail(r.stderr))
			}
			onlyUnder(t, tree(t, w), before, tc.writes...)
			if tc.check != nil {
				tc.check(t, w, r)
			}
		})
	}
}

// occArgs run os-collect-config once in w, collector given.
func occArgs(w, collector string) []string {
	return []string{"--config-file", "/dev/null", "--one-time", "--cachedir", w + "/cache", "--backup-cachedir", w + "/backup",
		"--local-path", w + "/local", "-c", "true", collector}
}

func occEnv(w string) []string { return []string{"OS_COLLECT_CONFIG_STATUS_DIR=" + w + "/status"} }

// hcEnv points 55-heat-config and the hooks into w.
func hcEnv(w string) []string {
	return []string{"HEAT_SHELL_CONFIG=" + w + "/heat-config", "HEAT_CONFIG_DEPLOYED=" + w + "/deployed",
		"HEAT_CONFIG_DEPLOYED_OLD=" + w + "/deployed-old", "HEAT_CONFIG_HOOKS=" + w + "/hooks",
		"HEAT_CONFIG_NOTIFY=heat-config-notify", "HEAT_SCRIPT_WORKING=" + w + "/work", "HEAT_SCRIPT_OUTPUTS=" + w + "/out"}
}

// serve answers every request with body, until the test ends.
func serve(t *testing.T, body []byte) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// hookDir links the agent's hooks into w/hooks.
func hookDir(t *testing.T, w string, hooks ...string) {
	t.Helper()
	if err := os.MkdirAll(w+"/hooks", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		if err := os.Symlink(filepath.Join(agent.Dir(t), h), filepath.Join(w, "hooks", h)); err != nil {
			t.Fatal(err)
		}
	}
}

// short cuts long lines for messages.
func short(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) > 300 {
			l = l[:300] + "..."
		}
		out[i] = l
	}
	return out
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
