package dockercompose_test

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/dockercompose"
	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/internal/exitcode"
)

// realTools are what TestRealDockerCompose needs: docker-compose talks
// to podman's Docker API service, which runs containers with runc, from
// an image made of busybox.
var realTools = []string{"docker-compose", "podman", "runc", "busybox"}

// A real `docker-compose up -d` through the hook, against podman's
// Docker API on a socket of the test's own: the container runs with the
// env file the hook wrote; then 50-heat-config-docker-compose, the
// deployment gone, kills it. Everything podman keeps (storage, state,
// the socket) is under the test's directory; the container uses the
// host's network, so no network namespace or firewall rule is made.
func TestRealDockerCompose(t *testing.T) {
	if testing.Short() {
		t.Skip("runs podman and docker-compose (a minute)")
	}
	for _, tool := range realTools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("REQUIRE_REAL_TOOLS") == "1" {
				t.Fatalf("%s is not installed", tool)
			}
			t.Skipf("%s is not installed: the test of a real docker-compose is skipped", tool)
		}
	}
	dir := t.TempDir()
	env := podmanEnv(t, dir)
	podman := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("podman", args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	podman("import", busyboxImage(t, dir), "localhost/heat-busybox:latest")
	stop := servePodman(t, env, filepath.Join(dir, "podman.sock"))
	defer stop()
	defer podman("rm", "--all", "--force", "--time", "0") // a failed test leaves no container running

	working := filepath.Join(dir, "working")
	compose := `{"version": "2", "services": {"web": {"image": "localhost/heat-busybox:latest", "network_mode": "host",
		"command": ["sh", "-c", "echo GREETING=$$GREETING; exec sleep 300"], "env_file": "web.env"}}}`
	conf := filepath.Join(dir, "heat-config")
	writeFile(t, conf, `[{"id": "1", "name": "real", "group": "docker-compose", "config": `+compose+`}]`)
	env = append(env, dockercompose.WorkingVar+"="+working, dockercompose.ConfigVar+"="+conf)
	if code, log := configureWith(t, env); code != 0 {
		t.Fatalf("50-heat-config-docker-compose: exit %d\n%s", code, log)
	}
	d := `{"id": "1", "name": "real", "group": "docker-compose", "inputs": [{"name": "env_files",
		"value": "[{'file_name': 'web.env', 'content': 'GREETING=hello from heat\\n'}]"}], "config": ` + compose + `}`
	start := time.Now()
	r := hooktest.Run(t, dockercompose.Hook, d, env)
	res := r.JSON(t)
	t.Logf("docker-compose up -d: %s", time.Since(start).Round(time.Millisecond))
	if r.Code != 0 || res["deploy_status_code"] != 0.0 {
		t.Fatalf("exit %d, result %s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(res["deploy_stderr"].(string), "real_web_1") {
		t.Errorf("deploy_stderr %q", res["deploy_stderr"])
	}
	var logs string
	for range 50 { // the container prints once it has started
		if logs = podman("logs", "real_web_1"); strings.Contains(logs, "GREETING=") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(logs, "GREETING=hello from heat") {
		t.Errorf("the container's output %q, want the env file's GREETING", logs)
	}
	if state := strings.TrimSpace(podman("inspect", "--format", "{{.State.Status}}", "real_web_1")); state != "running" {
		t.Errorf("container state %q", state)
	}

	writeFile(t, conf, `[]`) // the deployment is gone
	start = time.Now()
	if code, log := configureWith(t, env); code != 0 {
		t.Fatalf("50-heat-config-docker-compose: exit %d\n%s", code, log)
	}
	t.Logf("docker-compose kill: %s", time.Since(start).Round(time.Millisecond))
	if state := strings.TrimSpace(podman("inspect", "--format", "{{.State.Status}}", "real_web_1")); state == "running" {
		t.Errorf("container still running after the deployment went")
	}
	if fileExists(filepath.Join(working, "real", "docker-compose.yml")) {
		t.Error("docker-compose.yml left")
	}
}

func configureWith(t *testing.T, environ []string) (int, string) {
	t.Helper()
	var log strings.Builder
	err := hooks.RunScript(context.Background(), dockercompose.Configure, nil, hooks.Env{Environ: environ, Log: hooktest.Logger(&log)})
	return exitcode.Of(err), log.String()
}

// podmanEnv keeps podman's storage, state and configuration under dir:
// runc (crun is not installed), lowered ulimits (the defaults are
// above what this host allows), the vfs driver (no overlay mounts), no
// events log, and cgroups managed without systemd.
func podmanEnv(t *testing.T, dir string) []string {
	t.Helper()
	writeFile(t, filepath.Join(dir, "containers.conf"), `[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "none"
tmp_dir = "`+dir+`/tmp"
volume_path = "`+dir+`/volumes"
[network]
network_config_dir = "`+dir+`/networks"
`)
	writeFile(t, filepath.Join(dir, "storage.conf"), `[storage]
driver = "vfs"
graphroot = "`+dir+`/graph"
runroot = "`+dir+`/run"
`)
	return append(os.Environ(),
		"CONTAINERS_CONF="+filepath.Join(dir, "containers.conf"),
		"CONTAINERS_STORAGE_CONF="+filepath.Join(dir, "storage.conf"),
		"DOCKER_HOST=unix://"+filepath.Join(dir, "podman.sock"),
		"XDG_RUNTIME_DIR="+filepath.Join(dir, "xdg"))
}

// busyboxImage is a tar of a root filesystem holding busybox and links
// to the applets the test's container runs.
func busyboxImage(t *testing.T, dir string) string {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))})
	tw.Write(data)
	for _, applet := range []string{"sh", "sleep", "echo"} {
		tw.WriteHeader(&tar.Header{Name: "bin/" + applet, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777})
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "busybox.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// servePodman runs `podman system service` on sock until stop, which
// ends it (SIGTERM through its context) and waits for it.
func servePodman(t *testing.T, env []string, sock string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "podman", "system", "service", "--time=0", "unix://"+sock)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop = func() {
		cancel()
		<-done
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return stop
		}
		select {
		case <-done:
			t.Fatalf("podman system service ended: %s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("podman system service: no socket after a minute: %s", log.String())
		}
	}
}
