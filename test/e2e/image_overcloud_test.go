package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// overcloudGroups are the hook groups of an overcloud stack beyond script
// and puppet (lab/py/overcloud.py makes a deployment e2e-<group> of each).
var overcloudGroups = []string{"docker-cmd", "docker-compose", "kubelet", "salt", "chef", "cfn-init"}

// overcloud is issue 23's proof on the booted node: the golden image
// (with the configure.d elements and a heat-config element for every
// group) converges a stack holding a deployment of each further hook
// group, and the metadata of TripleO's configure.d elements lands where
// the reference elements put it.
func overcloud(t *testing.T, rootfs string) {
	const name = "image-overcloud"
	st := imageStack(t, "create", name, "--replace", "--transport", PollServerHeat, "--signal", HeatSignal,
		"--structured-signal", HeatSignal, "--overcloud", "--greeting", "hello")
	seed := map[string]string{
		occConf:                  bootConf(t, st),
		"/etc/sysconfig/network": "NETWORKING=yes\n",
		// A node's FQDN, as cloud-init writes it (chef's hook asks
		// hostname -f); 51-hosts must keep it.
		"/etc/hosts":                             "127.0.0.1 localhost\n127.0.1.1 occ-lab.e2e.example occ-lab\n",
		"/etc/cloud/templates/hosts.debian.tmpl": "127.0.0.1 {{fqdn}} {{hostname}}\n",
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var o *Outcome
	var waitErr error
	go func() {
		defer close(done)
		o, waitErr = waitStack(ctx, name, stackTimeout+5*time.Minute)
	}()
	t.Cleanup(func() { cancel(); <-done })
	m := bootMachine(t, name, rootfs, seed)
	<-done
	if waitErr != nil {
		t.Fatal(waitErr)
	}
	started, err := time.Parse("Mon 2006-01-02 15:04:05.000000 MST", m.unit("ExecMainStartTimestamp")["ExecMainStartTimestamp"])
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "CREATE_COMPLETE" {
		out, _ := m.exec(time.Minute, "journalctl", "-u", "os-collect-config", "-n", "80", "--no-pager")
		t.Fatalf("stack %s: %s (%s)\n%s", name, o.Status, o.Reason, out)
	}
	var times []string
	for _, g := range append(slices.Clone(overcloudGroups), "overcloud") {
		res := strings.ReplaceAll(g, "-", "_") + "_deployment"
		r, ok := o.Resources[res]
		if !ok || r.Status != "CREATE_COMPLETE" {
			t.Errorf("%s: %+v, want CREATE_COMPLETE", res, r)
			continue
		}
		if g != "overcloud" && fmt.Sprint(r.OutputValues["deploy_status_code"]) != "0" {
			t.Errorf("%s: deploy_status_code %v, stderr %v", res, r.OutputValues["deploy_status_code"], r.OutputValues["deploy_stderr"])
		}
		if at, ok := o.CompletedAt[res]; ok {
			times = append(times, fmt.Sprintf("%s %.0fs", g, time.Unix(int64(at), 0).Sub(started.Truncate(time.Second)).Seconds()))
		}
	}
	t.Logf("IMAGE overcloud: agent start to CREATE_COMPLETE per group (Heat's events, whole seconds): %s", strings.Join(times, ", "))

	t.Run("files", func(t *testing.T) { overcloudFiles(t, m) })
	t.Run("tools", func(t *testing.T) { overcloudTools(t, m) })
	t.Run("scripts", func(t *testing.T) { overcloudScripts(t, m, st) })
	t.Run("secrets", func(t *testing.T) { machineSecrets(t, m) })
}

// overcloudFiles: what the configure.d elements and cfn-init wrote.
func overcloudFiles(t *testing.T, m *machine) {
	want := map[string][]string{
		"/etc/sysctl.d/net.ipv4.ip_forward.conf":   {"net.ipv4.ip_forward = 1"},
		"/etc/sysctl.d/vm.swappiness.conf":         {"vm.swappiness = 10"},
		"/etc/puppet/hieradata/e2e-overcloud.yaml": {"e2e::raw: from raw_data", "e2e::mapped: from mapped_data", "e2e::oac: from oac_data"},
		"/etc/hosts":                             {"127.0.1.1 occ-lab.e2e.example occ-lab\n", "# HEAT_HOSTS_START", "192.0.2.11 e2e-cmp-0.example.com e2e-cmp-0", "# HEAT_HOSTS_END"},
		"/etc/cloud/templates/hosts.debian.tmpl": {"127.0.0.1 {{fqdn}} {{hostname}}", "192.0.2.10 e2e-ctl-0.example.com e2e-ctl-0"},
		"/etc/os-net-config/element_config.json": {`"e2e0"`},
		"/etc/sysconfig/network":                 {"GATEWAYDEV=e2e0"},
		"/var/lib/e2e-node/cfn-init.txt":         {"written by cfn-init"},
	}
	for path, parts := range want {
		b, err := os.ReadFile(m.path(path))
		if err != nil {
			t.Errorf("%s on the node: %v", path, err)
			continue
		}
		for _, p := range parts {
			if !strings.Contains(string(b), p) {
				t.Errorf("%s on the node has no %q:\n%s", path, p, b)
			}
		}
	}
}

// overcloudTools: each recording fake (testdata/elements/e2e-node-tools)
// was called as the reference calls its tool.
func overcloudTools(t *testing.T, m *machine) {
	b, err := os.ReadFile(m.path("/var/lib/e2e-node/fakes.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	t.Logf("the fakes' calls:\n%s", log)
	for _, call := range []string{
		"os-net-config -c /etc/os-net-config/element_config.json -v --detailed-exit-codes",
		"ifdown e2e0", "ifup e2e0",
		"sysctl -p /etc/sysctl.d/net.ipv4.ip_forward.conf",
		"docker-compose up -d --no-build",
		"salt-call", "chef-client",
	} {
		if !strings.Contains(log, call) {
			t.Errorf("no call %q among the fakes' calls", call)
		}
	}
	if !strings.Contains(log, "docker run") && !strings.Contains(log, "podman run") {
		t.Errorf("docker-cmd ran no container")
	}
}

// overcloudScripts: what the hooks' configure.d scripts wrote for the
// kubelet and docker-compose deployments (the tools read these).
func overcloudScripts(t *testing.T, m *machine, st *Stack) {
	want := map[string]string{
		"/var/lib/heat-config/heat-config-kubelet/kubelet-manifests/" + ids(st)["e2e-kubelet"] + ".json": `"e2e-pod"`,
		"/var/lib/heat-config/heat-config-docker-compose/e2e-docker-compose/docker-compose.yml":          "image: localhost/e2e-busybox",
	}
	for path, part := range want {
		b, err := os.ReadFile(m.path(path))
		if err != nil || !strings.Contains(string(b), part) {
			t.Errorf("%s on the node: %v, want %q in:\n%s", path, err, part, b)
		}
	}
}
