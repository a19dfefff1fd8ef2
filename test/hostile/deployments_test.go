package hostile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// badIDs are deployment ids that must never name a file: they leave the
// state directory, are no file name, are too long for the files named
// after them, or would split a log line.
var badIDs = []string{"../x", "/abs", "a/b", "a\x00b", "", ".", "..", "new\nline", "\x1b[31mred", strings.Repeat("i", 201)}

// Hostile deployment ids and names through 55-heat-config, with the
// script, hiera and json-file hooks and heat-config-notify as processes:
// every bad id is one ERROR line naming the entry, nothing of it is
// written, the good deployments run (exit 0, docs/exit-codes.md). A
// hostile name is only a label. hiera's data file names and json-file's
// paths come from Heat's config and are trusted as in the reference:
// they are written where they say.
func TestDeploymentIDs(t *testing.T) {
	agent.Dir(t)
	root := t.TempDir()
	hooks := filepath.Join(root, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"script", "hiera", "json-file"} {
		if err := os.Symlink(filepath.Join(agent.Dir(t), h), filepath.Join(hooks, h)); err != nil {
			t.Fatal(err)
		}
	}
	var list []any
	for _, id := range badIDs {
		list = append(list, map[string]any{"id": id, "name": "bad " + id, "group": "script", "inputs": []any{},
			"config": "#!/bin/sh\ntouch " + root + "/ran-bad\n"})
	}
	list = append(list,
		map[string]any{"id": "good-script", "name": "../../escape\nname", "group": "script", "inputs": []any{},
			"config": "#!/bin/sh\necho script ran > " + root + "/ran-good\n"},
		map[string]any{"id": "good-hiera", "name": "hiera", "group": "hiera", "inputs": []any{},
			"config": map[string]any{"datafiles": map[string]any{"common": map[string]any{"k": 1}, "../trusted-hiera": map[string]any{"k": 2}}}},
		map[string]any{"id": "good-json", "name": "json", "group": "json-file", "inputs": []any{},
			"config": map[string]any{root + "/trusted/json-file.json": map[string]any{"k": 3}}},
	)
	doc, _ := json.Marshal(list)
	write(t, root+"/heat-config", string(doc), 0o600)
	env := []string{
		"HEAT_SHELL_CONFIG=" + root + "/heat-config", "HEAT_CONFIG_DEPLOYED=" + root + "/deployed",
		"HEAT_CONFIG_DEPLOYED_OLD=" + root + "/deployed-old", "HEAT_CONFIG_HOOKS=" + hooks,
		"HEAT_CONFIG_NOTIFY=" + filepath.Join(agent.Dir(t), "heat-config-notify"),
		"HEAT_SCRIPT_WORKING=" + root + "/work", "HEAT_SCRIPT_OUTPUTS=" + root + "/out",
		"HEAT_PUPPET_HIERA_DATADIR=" + root + "/hieradata", "HEAT_HIERA_CONFIG=" + root + "/hiera.yaml",
		"HEAT_HIERA_ELEMENT_CHECK_CMD=echo empty",
	}
	before := tree(t, root)
	r := run(t, env, nil, "55-heat-config")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r.stderr)
	}
	skipped := r.lines("[ERROR] Skipping deployment")
	if len(skipped) != len(badIDs) {
		t.Errorf("%d entries skipped, want %d:\n%s", len(skipped), len(badIDs), r.stderr)
	}
	for i, id := range badIDs {
		if i < len(skipped) && !strings.Contains(skipped[i], jsondoc.PyReprString(id)) && id != "" {
			t.Errorf("line %q does not name id %q", skipped[i], id)
		}
	}
	if _, err := os.Stat(root + "/ran-bad"); err == nil {
		t.Error("a deployment with a bad id ran")
	}
	if got := read(t, root+"/ran-good"); got != "script ran\n" {
		t.Errorf("the good script deployment wrote %q", got)
	}
	onlyUnder(t, tree(t, root), before, "deployed/", "work/", "out/", "hieradata/", "trusted/", "trusted-hiera.json", "ran-good")
	for _, f := range []string{"hieradata/common.json", "trusted-hiera.json", "trusted/json-file.json"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("the trusted hook output %s: %v", f, err)
		}
	}
	for _, p := range tree(t, root+"/deployed") {
		id, _, _ := strings.Cut(strings.TrimPrefix(p, "."), ".")
		if !strings.HasPrefix(id, "good-") {
			t.Errorf("state file %q", p)
		}
	}
	t.Logf("skipped, one line each:\n%s", strings.Join(skipped, "\n"))
}

// Each hook, and heat-config-notify, given a deployment with a bad id
// directly (as an operator or a foreign heat-config might): exit 1 and
// one ERROR line, nothing written.
func TestHooksRefuseBadIDs(t *testing.T) {
	for _, prog := range []string{"script", "hiera", "json-file", "heat-config-notify"} {
		for _, id := range badIDs {
			root := t.TempDir()
			doc, _ := json.Marshal(map[string]any{"id": id, "group": prog, "inputs": []any{}, "config": map[string]any{}})
			env := []string{"HEAT_SCRIPT_WORKING=" + root + "/work", "HEAT_SCRIPT_OUTPUTS=" + root + "/out",
				"HEAT_PUPPET_HIERA_DATADIR=" + root + "/hieradata", "HEAT_HIERA_CONFIG=" + root + "/hiera.yaml",
				"HEAT_HIERA_ELEMENT_CHECK_CMD=echo empty"}
			var r result
			if prog == "heat-config-notify" {
				write(t, root+"/in/deployment.json", string(doc), 0o600)
				r = run(t, env, []byte("{}"), prog, root+"/in/deployment.json")
			} else {
				r = run(t, env, doc, prog)
			}
			errs := r.lines("[ERROR]")
			if r.code != 1 || len(errs) != 1 || !strings.Contains(errs[0], "invalid deployment") {
				t.Errorf("%s with id %q: exit %d, error lines %q, want 1 and one", prog, id, r.code, errs)
			}
			if p := tree(t, root); len(p) > 2 {
				t.Errorf("%s with id %q wrote %q", prog, id, p)
			}
		}
	}
}
