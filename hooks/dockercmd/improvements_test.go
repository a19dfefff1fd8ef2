package dockercmd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/dockercmd"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

func deploymentWith(config string) string {
	return `{"id": "c1", "group": "docker-cmd", "inputs": [{"name": "deploy_stack_id", "value": "s"},
	{"name": "deploy_resource_name", "value": "r"}, {"name": "db_password", "value": "hunter2-input"}], "config": ` + config + `}`
}

// The tools' stdout is in deploy_stdout only: the hook's stdout is the
// result alone, where the reference wrote each run's stdout (a detached
// run's container id) before it, which 55-heat-config cannot read.
func TestStdoutIsTheResultAlone(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, dockercmd.Hook, deploymentWith(`{"a": {"image": "x"}}`),
		f.environ(t, []rsp{{Returncode: 1}, {Stdout: "0123abcd\n", Stderr: "pulling x\n"}}))
	want := `{"deploy_stdout": "0123abcd\n", "deploy_stderr": "pulling x\n", "deploy_status_code": 0}`
	if r.Code != 0 || r.Stdout != want || !strings.Contains(r.Stderr, "pulling x\n") {
		t.Errorf("exit %d\n got %s\nwant %s\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
}

// volumes_from is passed as --volumes-from, the flag docker and podman
// have (podman refuses the reference's --volumes_from: "unknown flag");
// environment as text is one variable, as an object its keys (as the
// reference); pid and non-text values as Python's str().
func TestRunArguments(t *testing.T) {
	f := setup(t)
	hooktest.Run(t, dockercmd.Hook, deploymentWith(`{"a": {"image": "x", "detach": false, "environment": "A=1",
		"volumes_from": ["b", ""], "pid": "host", "privileged": "Yes", "user": 0, "command": ["sh", 1]}}`),
		f.environ(t, []rsp{{Returncode: 1}, {}}))
	want := []string{f.tool, "run", "--name", "a", "--label", "deploy_stack_id=s", "--label", "deploy_resource_name=r",
		"--label", "config_id=c1", "--label", "container_name=a", "--label", "managed_by=docker-cmd",
		"--env=A=1", "--pid=host", "--privileged=yes", "--user=0", "--volumes-from=b", "x", "sh", "1"}
	if got := hooktest.ReadState(t, f.state, 1).Args; !slices.Equal(got, want) {
		t.Errorf("argv\n got %q\nwant %q", got, want)
	}
	f = setup(t)
	hooktest.Run(t, dockercmd.Hook, deploymentWith(`"a:\n  image: x\n  environment: {B: 2}\n  env_file: null\n  privileged: yes\n"`),
		f.environ(t, []rsp{{Returncode: 1}, {}}))
	if got := hooktest.ReadState(t, f.state, 1).Args[14:]; !slices.Equal(got, []string{"--detach=true", "--env-file=None", "--env=B", "--privileged=true", "x"}) {
		t.Errorf("YAML config: argv %q", got)
	}
}

// docker not installed: each run is status 127 saying so, where the
// reference crashed without a result.
func TestDockerNotInstalled(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, dockercmd.Hook, deploymentWith(`{"a": {"image": "x"}}`), f.environ(t, nil, dockercmd.CmdVar+"=", "PATH="+f.bin))
	want := `{"deploy_stdout": "", "deploy_stderr": "docker: command not found", "deploy_status_code": 127}`
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("exit %d\n got %s\nwant %s\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
}

// Credential-named variables of the command line and the deployment's
// credential inputs are hidden in the log; the container gets them.
func TestLogHidesCredentials(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, dockercmd.Hook, deploymentWith(`{"a": {"image": "x", "environment": ["DB_PASSWORD=s3cret-env", "X=hunter2-input"]}}`),
		f.environ(t, []rsp{{Returncode: 1}, {Stderr: "echo hunter2-input"}}))
	if strings.Contains(r.Stderr, "s3cret-env") || strings.Contains(r.Stderr, "hunter2-input") || !strings.Contains(r.Stderr, "'--env=DB_PASSWORD=***'") {
		t.Errorf("log:\n%s", r.Stderr)
	}
	if args := hooktest.ReadState(t, f.state, 1).Args; !slices.Contains(args, "--env=DB_PASSWORD=s3cret-env") {
		t.Errorf("argv %q", args)
	}
}

// A command that says every name exists stops the search after 100
// names (the reference looped for ever).
func TestUniqueNameGivesUp(t *testing.T) {
	f := setup(t)
	resp := make([]rsp, 100)
	for i := range resp {
		resp[i] = rsp{Stdout: "exists\n"}
	}
	r := hooktest.Run(t, dockercmd.Hook, deploymentWith(`{"a": {"image": "x"}}`), f.environ(t, resp))
	if r.Code != 1 || !strings.Contains(r.Stderr, `[ERROR] no free name for container "a" after 100 tries`) || hooktest.Calls(f.state) != 100 {
		t.Errorf("exit %d, %d calls\n%s", r.Code, hooktest.Calls(f.state), r.Stderr)
	}
}
