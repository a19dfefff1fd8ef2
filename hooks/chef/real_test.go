package chef_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/chef"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

// need skips t without -short or when tool is not installed, unless
// REQUIRE_REAL_TOOLS=1 says it must run.
func need(t *testing.T, tool string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs " + tool)
	}
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("REQUIRE_REAL_TOOLS") == "1" {
			t.Fatalf("%s is not installed (REQUIRE_REAL_TOOLS=1)", tool)
		}
		t.Skip(tool + " is not installed")
	}
}

// kitchenRepo is a git repository holding a cookbook whose recipe writes
// an output file.
func kitchenRepo(t *testing.T) string {
	repo := t.TempDir()
	recipe := filepath.Join(repo, "cookbooks", "heat", "recipes", "default.rb")
	if err := os.MkdirAll(filepath.Dir(recipe), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		recipe: "file \"#{ENV['heat_outputs_path']}.result\" do\n  content node['message']\nend\n",
		filepath.Join(repo, "cookbooks", "heat", "metadata.rb"): "name 'heat'\nversion '0.1.0'\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "kitchen"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

func realData(repo, kitchen, action string) string {
	return `{"id": "real-1", "group": "chef", "options": {"kitchen": "` + repo + `", "kitchen_path": "` + kitchen + `"},
	"inputs": [{"name": "message", "value": "hello from heat"}, {"name": "deploy_action", "value": "` + action + `"}],
	"outputs": [{"name": "result"}], "config": "[\"recipe[heat]\"]"}`
}

// The kitchen is cloned by the real git (chef-client is the fake here:
// it is not installable on this machine); a second CREATE finds the
// kitchen there and fails as the reference's clone did, an UPDATE clones
// it afresh.
func TestRealGitKitchen(t *testing.T) {
	need(t, "git")
	f := setup(t)
	os.Remove(f.git) // the real git
	repo := kitchenRepo(t)
	kitchen := filepath.Join(t.TempDir(), "kitchen")
	env := f.environ(t, nil, "HOME="+t.TempDir())
	r := hooktest.Run(t, chef.Hook, realData(repo, kitchen, "CREATE"), env)
	if res := r.JSON(t); res["deploy_status_code"] != 0.0 {
		t.Fatalf("result %s\n%s", r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(kitchen, "cookbooks", "heat", "recipes", "default.rb")); err != nil {
		t.Fatal(err)
	}
	r = hooktest.Run(t, chef.Hook, realData(repo, kitchen, "CREATE"), env)
	if res := r.JSON(t); res["deploy_status_code"] != 128.0 || !strings.Contains(res["deploy_stderr"].(string), "already exists") {
		t.Errorf("second clone: %s", r.Stdout)
	}
	r = hooktest.Run(t, chef.Hook, realData(repo, kitchen, "UPDATE"), env)
	if res := r.JSON(t); res["deploy_status_code"] != 0.0 {
		t.Errorf("UPDATE: %s", r.Stdout)
	}
}

// A real chef-client run of the kitchen's recipe (skipped here: chef is
// not installable on this machine).
func TestRealChef(t *testing.T) {
	need(t, "git")
	need(t, "chef-client")
	dir := t.TempDir()
	repo := kitchenRepo(t)
	env := append(os.Environ(), "HEAT_CHEF_WORKING="+filepath.Join(dir, "w"), "HEAT_CHEF_OUTPUTS="+filepath.Join(dir, "o"))
	r := hooktest.Run(t, chef.Hook, realData(repo, filepath.Join(dir, "kitchen"), "CREATE"), env)
	if res := r.JSON(t); res["deploy_status_code"] != 0.0 || res["result"] != "hello from heat" {
		t.Errorf("result %s\n%s", r.Stdout, r.Stderr)
	}
}
