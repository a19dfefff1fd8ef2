package dockercmd_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/dockercmd"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

// podmanEnv is an environment in which podman keeps everything under dir
// (storage, its run and temporary files, networks) and runs containers
// with runc and lowered ulimits, the only way it can on a test machine
// that is itself a container. The measured cost of leaving static_dir
// alone: setting it elsewhere made every attached run wait 20 s for its
// conmon.
func podmanEnv(t *testing.T, dir string) []string {
	t.Helper()
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "containers.conf")
	write(t, conf, `[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
tmp_dir = "`+tmp+`"
events_logger = "none"
image_copy_tmp_dir = "`+tmp+`"
[network]
network_config_dir = "`+filepath.Join(dir, "networks")+`"
`)
	storage := filepath.Join(dir, "storage.conf")
	write(t, storage, `[storage]
driver = "vfs"
graphroot = "`+filepath.Join(dir, "graph")+`"
runroot = "`+filepath.Join(dir, "run")+`"
`)
	return append(os.Environ(), "CONTAINERS_CONF="+conf, "CONTAINERS_STORAGE_CONF="+storage, "TMPDIR="+tmp)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// podman runs podman in env, failing t when it fails.
func podman(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("podman", args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// busyboxImage is a tar of a root holding /bin/busybox and its applets'
// links.
func busyboxImage(t *testing.T, path string) {
	t.Helper()
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Skip("no /bin/busybox (busybox-static) to make an image of")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := tar.NewWriter(f)
	w.WriteHeader(&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755})
	w.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bb))})
	w.Write(bb)
	for _, l := range []string{"sh", "echo", "sleep", "cat", "env", "true"} {
		w.WriteHeader(&tar.Header{Name: "bin/" + l, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func requireRealTools(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("REQUIRE_REAL_TOOLS") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

const image = "localhost/dockercmd-test:latest"

// removePodmanRoot removes the containers, then dir. The cleanup that
// conmon starts when a container stops (podman container cleanup) runs
// after `podman rm` returns and writes under dir again: measured, a
// t.TempDir was left behind that way. So dir is removed until it stays
// gone for half a second.
func removePodmanRoot(t *testing.T, env []string, dir string) {
	cmd := exec.Command("podman", "rm", "--force", "--all", "--time", "0")
	cmd.Env = env
	cmd.Run()
	for range 20 {
		if err := os.RemoveAll(dir); err != nil {
			t.Log(err)
		}
		time.Sleep(500 * time.Millisecond)
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return
		}
	}
	t.Errorf("%s keeps coming back", dir)
}

// realConfig: a detached container that waits for SIGTERM (start_order
// 0), one run to completion that prints its environment's variables
// (one from an env file), and an exec in the first.
func realConfig(envFile string) string {
	b, _ := json.Marshal(map[string]any{
		"daemon": map[string]any{"image": image, "net": "none", "start_order": 0,
			"command": []string{"sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"}},
		"job": map[string]any{"image": image, "net": "none", "detach": false, "start_order": 1,
			"environment": []string{"GREETING=hello from"}, "env_file": envFile,
			"command": []string{"sh", "-c", "echo $GREETING $WHO"}},
		"probe": map[string]any{"action": "exec", "start_order": 2, "command": "daemon echo exec works"},
	})
	return string(b)
}

// Podman through the hook: the containers start, in order, labelled;
// a second deployment of the same containers gets suffixed names; then
// 50-heat-config-docker-cmd, given a list without the first, removes the
// first's containers and renames the second's to the plain names.
func TestRealPodman(t *testing.T) {
	if testing.Short() {
		t.Skip("runs podman containers (seconds)")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		requireRealTools(t, "podman is not installed")
	}
	if os.Geteuid() != 0 {
		requireRealTools(t, "podman containers need root here")
	}
	dir, err := os.MkdirTemp("", "TestRealPodman")
	if err != nil {
		t.Fatal(err)
	}
	env := podmanEnv(t, dir)
	t.Cleanup(func() { removePodmanRoot(t, env, dir) })
	busyboxImage(t, filepath.Join(dir, "image.tar"))
	podman(t, env, "import", filepath.Join(dir, "image.tar"), image)

	start := time.Now()
	podman(t, env, "run", "--rm", "--net=none", image, "true")
	t.Logf("one attached podman run --rm: %v", time.Since(start).Round(time.Millisecond))

	envFile := filepath.Join(dir, "who.env")
	write(t, envFile, "WHO=docker-cmd\n")
	env = append(env, dockercmd.CmdVar+"=podman", "HEAT_CONFIG_HOOK_TIMEOUT=120", dockercmd.SeenVar+"="+filepath.Join(dir, "docker-cmd.seen"))
	deploy := func(id string) map[string]any {
		d := `{"id": "` + id + `", "name": "real", "group": "docker-cmd", "inputs": [{"name": "deploy_stack_id", "value": "stack"},
		{"name": "deploy_resource_name", "value": "res"}], "config": ` + realConfig(envFile) + `}`
		start := time.Now()
		r := hooktest.Run(t, dockercmd.Hook, d, env)
		t.Logf("deployment %s (7 or 9 podman calls, 2 containers started): %v", id, time.Since(start).Round(time.Millisecond))
		res := r.JSON(t)
		if os.Getenv("DOCKERCMD_SHOW_LOG") != "" {
			t.Log(r.Stderr)
		}
		if r.Code != 0 || res["deploy_status_code"] != 0.0 {
			t.Fatalf("exit %d, result %s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		// The detached run prints the container's id; the others print
		// what ran in them.
		if !regexp.MustCompile(`^[0-9a-f]{64}\n\nhello from docker-cmd\n\nexec works\n$`).MatchString(res["deploy_stdout"].(string)) {
			t.Errorf("deploy_stdout %q", res["deploy_stdout"])
		}
		return res
	}
	deploy("real-1")
	names := func(id string) []string {
		out := podman(t, env, "ps", "-a", "--filter", "label=config_id="+id, "--filter", "label=managed_by=docker-cmd", "--format", "{{.Names}}")
		n := strings.Fields(out)
		slices.Sort(n)
		return n
	}
	if got := names("real-1"); !slices.Equal(got, []string{"daemon", "job"}) {
		t.Fatalf("real-1's containers %q", got)
	}
	deploy("real-2")
	second := names("real-2")
	if len(second) != 2 || !regexp.MustCompile(`^daemon-[0-9a-z]{8}$`).MatchString(second[0]) || !regexp.MustCompile(`^job-[0-9a-z]{8}$`).MatchString(second[1]) {
		t.Fatalf("real-2's containers %q, want suffixed names", second)
	}

	list := filepath.Join(dir, "heat-config")
	write(t, list, `[{"id": "real-2", "group": "docker-cmd", "inputs": []}]`)
	start = time.Now()
	var log strings.Builder
	if err := hooks.RunScript(context.Background(), dockercmd.Cleanup, nil, hooks.Env{Stderr: &log, Environ: append(env, hooks.DeploymentsVar+"="+list)}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("cleanup (2 containers removed, 2 renamed): %v", time.Since(start).Round(time.Millisecond))
	if got := names("real-1"); len(got) != 0 {
		t.Errorf("real-1's containers left: %q\n%s", got, log.String())
	}
	if got := names("real-2"); !slices.Equal(got, []string{"daemon", "job"}) {
		t.Errorf("real-2's containers %q after the cleanup, want the plain names\n%s", got, log.String())
	}
}
