package kubelet_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/kubelet"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

func TestMain(m *testing.M) { hooktest.Main(m, kubelet.Hook) }

// The reference test's deployment.
const pod = `{"id": "a50ae8dd-b0c4-407f-8732-3571b3a0f28b", "group": "kubelet", "inputs": [], "name": "20_apache_deployment",
	"outputs": [], "options": OPTIONS, "config": {"version": "v1beta2", "volumes": [{"name": "mariadb-data"}], "containers": [
	{"image": "kollaglue/fedora-rdo-rabbitmq", "name": "rabbitmq", "ports": [{"containerPort": 5672, "hostPort": 5672}]},
	{"image": "kollaglue/fedora-rdo-heat-engine", "name": "heat-engine", "env": [{"name": "AUTH_ENCRYPTION_KEY", "value": "Vegu95l2jwkucD9RSYAoFpRbUlh0PGF7"}]},
	{"image": "kollaglue/fedora-rdo-heat-engine", "name": "heat-engine2", "env": [{"name": "AUTH_ENCRYPTION_KEY", "value": "Vegu95l2jwkucD9RSYAoFpRbUlh0PGF7"}]}]}}`

func containers(t *testing.T, config string) []kubelet.Container {
	t.Helper()
	v, err := jsondoc.Loads([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubelet.PodContainers(v)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// test_hook_kubelet.py: test_id_to_pod_name_part.
func TestIDToPodNamePart(t *testing.T) {
	if got := kubelet.IDToPodNamePart("fc9070b3-ba4e-4f22-b732-5ffdcdb40b74"); got != "fc9070b3ba4e4f2" {
		t.Errorf("got %q", got)
	}
}

// test_hook_kubelet.py: test_container_pattern, its pattern and each
// name it must and must not match.
func TestContainerPattern(t *testing.T) {
	p := kubelet.ContainerPattern("fc9070b3-ba4e-4f22-b732-5ffdcdb40b74", "mariadb")
	if p != `^/k8s_mariadb\.[0-9a-z]{8}_fc9070b3ba4e4f2` {
		t.Fatalf("pattern %q", p)
	}
	re := regexp.MustCompile(p)
	for name, want := range map[string]bool{
		"/k8s_mariadb.dac8ccce_fc9070b3ba4e4f2uv6pejpu5nqbmrqoungurhtob5gvt.default.file_2c8cf9fc94674e8buv6pejpu5nqbmrqoungurhtob5gvt_dcd1e1d9": true,
		"/k8s_mariadb.dac8ccce_fc9070b3ba4e4f2a":  true,
		"k8s_mariadb.dac8ccce_fc9070b3ba4e4f2a":   false,
		"/k8s_mysqldb.dac8ccce_fc9070b3ba4e4f2a":  false,
		"/k8s_mariadb.dac8ccc_fc9070b3ba4e4f2a":   false,
		"/k8s_mariadb.dac8ccce_gc9070b3ba4e4f22a": false,
	} {
		if re.MatchString(name) != want {
			t.Errorf("%s: match %v, want %v", name, !want, want)
		}
	}
}

// test_hook_kubelet.py: test_required_images (each image once; none for
// a pod without containers) and test_required_container_patterns.
func TestRequiredImagesAndPatterns(t *testing.T) {
	d, err := jsondoc.Loads([]byte(strings.Replace(pod, "OPTIONS", "{}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	config, _ := d.(*jsondoc.Object).Get("config")
	cs := containers(t, jsondoc.Dumps(config))
	if got := kubelet.RequiredImages(cs); !slices.Equal(got, []string{"kollaglue/fedora-rdo-heat-engine", "kollaglue/fedora-rdo-rabbitmq"}) {
		t.Errorf("images %q", got)
	}
	if got := kubelet.RequiredImages(containers(t, `{}`)); len(got) != 0 {
		t.Errorf("images of no containers %q", got)
	}
	want := []kubelet.Pattern{
		{Name: "rabbitmq", Regexp: `^/k8s_rabbitmq\.[0-9a-z]{8}_a50ae8ddb0c4407`},
		{Name: "heat-engine", Regexp: `^/k8s_heat-engine\.[0-9a-z]{8}_a50ae8ddb0c4407`},
		{Name: "heat-engine2", Regexp: `^/k8s_heat-engine2\.[0-9a-z]{8}_a50ae8ddb0c4407`},
	}
	if got := kubelet.RequiredContainerPatterns("a50ae8dd-b0c4-407f-8732-3571b3a0f28b", cs); !slices.Equal(got, want) {
		t.Errorf("patterns %q", got)
	}
}

type fixture struct{ bin, state, docker string }

func setup(t *testing.T) *fixture {
	f := &fixture{bin: t.TempDir()}
	f.state = filepath.Join(t.TempDir(), "test_state.json")
	f.docker = hooktest.Tool(t, f.bin, "docker-fake")
	return f
}

const (
	images  = "kollaglue/fedora-rdo-rabbitmq:latest\nkollaglue/fedora-rdo-heat-engine:v1\n<none>:<none>\n"
	running = "k8s_rabbitmq.dac8ccce_a50ae8ddb0c4407xyz,other/link\nk8s_heat-engine.0123abcd_a50ae8ddb0c4407x\nk8s_heat-engine2.0123abcd_a50ae8ddb0c4407x\n"
)

// The hook asks docker for its API version, then polls `docker images`
// until a tag of each image is there, then `docker ps` until a running
// container matches each pattern; its log is deploy_stdout (warnings and
// errors deploy_stderr too); a wait past its timeout is status 1.
func TestHook(t *testing.T) {
	version := hooktest.Response{Stdout: "1.41\n"}
	for _, tc := range []struct {
		name    string
		options string
		resp    []hooktest.Response
		status  float64
		calls   []string // the docker subcommands
		stdout  []string
		stderr  string // after "An error occurred deploying pod <id>"
	}{
		{"the pod is up", `{}`, []hooktest.Response{version, {Stdout: images}, {Stdout: running}}, 0,
			[]string{"version", "images", "ps"}, []string{
				"[DEBUG] Connecting to unix:///var/run/docker.sock\n", "[DEBUG] Connected to version 1.41\n",
				"[INFO] Waiting for images: kollaglue/fedora-rdo-heat-engine, kollaglue/fedora-rdo-rabbitmq\n",
				"[INFO] Found image: kollaglue/fedora-rdo-heat-engine:v1\n", "[INFO] Found image: kollaglue/fedora-rdo-rabbitmq:latest\n",
				`[INFO] Waiting for containers matching: ^/k8s_rabbitmq\.[0-9a-z]{8}_a50ae8ddb0c4407, ^/k8s_heat-engine\.[0-9a-z]{8}_a50ae8ddb0c4407, ^/k8s_heat-engine2\.[0-9a-z]{8}_a50ae8ddb0c4407` + "\n",
				`[INFO] Pattern ^/k8s_rabbitmq\.[0-9a-z]{8}_a50ae8ddb0c4407 matches: /k8s_rabbitmq.dac8ccce_a50ae8ddb0c4407xyz` + "\n",
			}, ""},
		{"polls until they come", `{"poll_period": 0.01}`, []hooktest.Response{version, {Stdout: "kollaglue/fedora-rdo-rabbitmq:latest\n"}, {Stdout: images},
			{Stdout: "k8s_rabbitmq.dac8ccce_a50ae8ddb0c4407xyz\n"}, {Stdout: running}}, 0, []string{"version", "images", "images", "ps", "ps"}, nil, ""},
		{"images time out", `{"images_timeout": 0, "poll_period": 0}`, []hooktest.Response{version, {Stdout: "kollaglue/fedora-rdo-rabbitmq:latest\n"}}, 1,
			[]string{"version", "images"}, nil,
			"[ERROR] Timed out after 0 seconds waiting for matching images: kollaglue/fedora-rdo-heat-engine:\n"},
		{"containers time out", `{"containers_timeout": 0.0, "poll_period": 0}`, []hooktest.Response{version, {Stdout: images}, {Stdout: "k8s_rabbitmq.dac8ccce_a50ae8ddb0c4407xyz\n"}}, 1,
			[]string{"version", "images", "ps"}, nil,
			`[ERROR] Timed out after 0.0 seconds waiting for matching containers: ^/k8s_heat-engine\.[0-9a-z]{8}_a50ae8ddb0c4407, ^/k8s_heat-engine2\.[0-9a-z]{8}_a50ae8ddb0c4407` + "\n"},
		{"docker is not there", `{}`, []hooktest.Response{{Stderr: "Cannot connect to the Docker daemon", Returncode: 1}}, 1,
			[]string{"version"}, nil, "[ERROR] docker-fake version: exit status 1: Cannot connect to the Docker daemon\n"},
		{"a bad option", `{"poll_period": "soon"}`, []hooktest.Response{version}, 1,
			[]string{"version"}, nil, `[ERROR] option poll_period is not a number of seconds: "soon"` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			env := hooktest.Environ(t, f.bin, f.state, tc.resp, kubelet.DockerCmdVar+"=docker-fake", "DOCKER_HOST=")
			r := hooktest.Run(t, kubelet.Hook, strings.Replace(pod, "OPTIONS", tc.options, 1), env)
			res := r.JSON(t)
			if r.Code != 0 || res["deploy_status_code"] != tc.status {
				t.Fatalf("exit %d, result %s\n%s", r.Code, r.Stdout, r.Stderr)
			}
			var calls []string
			for i := range hooktest.Calls(f.state) {
				st := hooktest.ReadState(t, f.state, i)
				calls = append(calls, st.Args[1])
				want := map[string][]string{"version": {"--format", "{{.Server.APIVersion}}"}, "images": {"--format", "{{.Repository}}:{{.Tag}}"}, "ps": {"--format", "{{.Names}}"}}[st.Args[1]]
				if !slices.Equal(st.Args[2:], want) {
					t.Errorf("call %d: argv %q", i, st.Args)
				}
			}
			if !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
			stdout, stderr := res["deploy_stdout"].(string), res["deploy_stderr"].(string)
			for _, line := range tc.stdout {
				if !strings.Contains(stdout, "(heat-config) "+line) || !strings.Contains(r.Stderr, line) {
					t.Errorf("deploy_stdout and the log lack %q:\n%s", line, stdout)
				}
			}
			want := ""
			if tc.stderr != "" {
				want = withPrefix("[ERROR] An error occurred deploying pod a50ae8dd-b0c4-407f-8732-3571b3a0f28b\n" + tc.stderr)
			}
			if got := stripTimes(stderr); got != want {
				t.Errorf("deploy_stderr\n got %q\nwant %q", got, want)
			}
			if tc.stderr != "" && !strings.Contains(stdout, strings.Split(tc.stderr, "\n")[0]) {
				t.Errorf("deploy_stdout lacks the errors: %s", stdout)
			}
		})
	}
}

var stamp = regexp.MustCompile(`(?m)^\[[^]]*\] `)

func stripTimes(s string) string { return stamp.ReplaceAllString(s, "") }

func withPrefix(lines string) string {
	if lines == "" {
		return ""
	}
	return "(heat-config) " + strings.ReplaceAll(strings.TrimSuffix(lines, "\n"), "\n", "\n(heat-config) ") + "\n"
}
