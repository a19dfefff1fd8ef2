// Command hcbench is what make bench runs for 55-heat-config: the pass
// every refresh pays (500 deployments, all deployed already) and a pass
// that runs 50 new trivial script deployments with NO_SIGNAL through the
// script hook and heat-config-notify; wall time (median) and peak RSS of
// the whole tree of processes. With -heat-agents (a checkout of
// openstack/heat-agents, which Debian does not package) it runs the
// Python reference side by side and prints the ratios.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

type benchCase struct {
	name     string
	total    int // deployments in the list
	deployed int // of which already deployed
}

var cases = []benchCase{
	{name: "500 deployed, nothing to run", total: 500, deployed: 500},
	{name: "50 new script deployments, NO_SIGNAL", total: 50, deployed: 0},
}

// program is one side: 55-heat-config, its hook dir and its notifier.
type program struct {
	name, heatConfig, hooks, notify string
}

func main() {
	ours := flag.String("ours", "bin", "directory of our built binary and its links")
	agents := flag.String("heat-agents", "", "a checkout of openstack/heat-agents for the reference side (optional)")
	runs := flag.Int("runs", 7, "timed runs per program and case")
	workdir := flag.String("workdir", "", "scratch directory (default: a new temporary directory)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *ours, *agents, *runs, *workdir); err != nil {
		fmt.Fprintln(os.Stderr, "hcbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, stdout io.Writer, ours, agents string, runs int, workdir string) error {
	if workdir == "" {
		d, err := os.MkdirTemp("", "hcbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		workdir = d
	}
	progs, err := programs(ours, agents, workdir)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "case\tprogram\truns\tmedian ms\tms/deployment\tpeak RSS MiB\tratio ref/ours\n")
	for i, c := range cases {
		conf := filepath.Join(workdir, fmt.Sprintf("case%d.json", i))
		if err := os.WriteFile(conf, deploymentsJSON(c.total), 0o600); err != nil {
			return err
		}
		samples, err := benchkit.Alternate(runs, len(progs), func(r, side int) (benchkit.Sample, error) {
			p := progs[side]
			state := filepath.Join(workdir, "state-"+p.name)
			if err := prepareState(state, c); err != nil {
				return benchkit.Sample{}, err
			}
			s, log, err := pass(ctx, p, conf, state, workdir)
			if err == nil && r == 0 {
				err = check(state, c)
			}
			if err != nil {
				return s, fmt.Errorf("%s: %v\n%s", p.name, err, log)
			}
			return s, nil
		})
		if err != nil {
			return err
		}
		medians := map[string]float64{}
		for side, p := range progs {
			m := benchkit.Median(samples[side])
			medians[p.name] = m
			ratio := ""
			if p.name == "ours" && medians["reference"] > 0 {
				ratio = fmt.Sprintf("%.1fx", benchkit.Ratio(medians["reference"], m))
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.2f\t%.1f\t%s\n", c.name, p.name, runs, m, m/float64(c.total), benchkit.PeakRSSMiB(samples[side]), ratio)
		}
	}
	return tw.Flush()
}

func programs(ours, agents, workdir string) ([]program, error) {
	abs, err := filepath.Abs(ours)
	if err != nil {
		return nil, err
	}
	hooks := filepath.Join(workdir, "hooks-ours")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(hooks, "script"))
	if err := os.Symlink(filepath.Join(abs, "tripleo-agent"), filepath.Join(hooks, "script")); err != nil {
		return nil, err
	}
	heatConfig := filepath.Join(workdir, "55-heat-config")
	os.Remove(heatConfig)
	if err := os.Symlink(filepath.Join(abs, "tripleo-agent"), heatConfig); err != nil {
		return nil, err
	}
	out := []program{}
	if agents != "" {
		refHooks := filepath.Join(workdir, "hooks-reference")
		if err := os.MkdirAll(refHooks, 0o755); err != nil {
			return nil, err
		}
		os.Remove(filepath.Join(refHooks, "script"))
		if err := os.Symlink(filepath.Join(agents, "heat-config-script/install.d/hook-script.py"), filepath.Join(refHooks, "script")); err != nil {
			return nil, err
		}
		out = append(out, program{name: "reference", heatConfig: filepath.Join(agents, "heat-config/os-refresh-config/configure.d/55-heat-config"),
			hooks: refHooks, notify: filepath.Join(agents, "heat-config/bin/heat-config-notify")})
	}
	return append(out, program{name: "ours", heatConfig: heatConfig, hooks: hooks, notify: filepath.Join(abs, "heat-config-notify")}), nil
}

// deploymentsJSON is a list of script deployments shaped like Heat's:
// a config of a few hundred bytes, TripleO-like inputs, NO_SIGNAL.
func deploymentsJSON(n int) []byte {
	list := make([]jsondoc.Value, 0, n)
	for i := range n {
		d := jsondoc.NewObject(9)
		d.Set("id", fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		d.Set("name", fmt.Sprintf("deployment-%04d", i))
		d.Set("group", "script")
		d.Set("creation_time", "2026-11-25T10:00:00Z")
		d.Set("config", "#!/bin/sh\n# "+strings.Repeat("configure the node; ", 20)+"\nexit 0\n")
		var inputs []jsondoc.Value
		for _, kv := range [][2]string{{"step", "3"}, {"role", "Controller"}, {"deploy_identifier", "1764064800"},
			{"deploy_server_id", "5a0b2c5e-1f0e-4c3a-9d2b-000000000001"}, {"deploy_action", "CREATE"},
			{"deploy_stack_id", "overcloud/6e2c7f3a-7a1d-4b2f-8f8e-000000000002"}, {"deploy_resource_name", fmt.Sprintf("Deployment%d", i)},
			{"deploy_signal_transport", "NO_SIGNAL"}} {
			in := jsondoc.NewObject(4)
			in.Set("name", kv[0])
			in.Set("type", "String")
			in.Set("value", kv[1])
			in.Set("description", "an input")
			inputs = append(inputs, in)
		}
		d.Set("inputs", inputs)
		d.Set("outputs", []jsondoc.Value{})
		d.Set("options", nil)
		list = append(list, d)
	}
	return []byte(jsondoc.Dumps(list))
}

func stateDir(state string) string { return filepath.Join(state, "deployed") }

// prepareState empties the state and marks the deployed ones.
func prepareState(state string, c benchCase) error {
	if err := os.RemoveAll(state); err != nil {
		return err
	}
	for _, d := range []string{stateDir(state), filepath.Join(state, "working"), filepath.Join(state, "outputs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	for i := range c.deployed {
		p := filepath.Join(stateDir(state), fmt.Sprintf("00000000-0000-4000-8000-%012d.json", i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// check: every deployment ran (has a notify file) or was deployed.
func check(state string, c benchCase) error {
	entries, err := os.ReadDir(stateDir(state))
	if err != nil {
		return err
	}
	notified := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".notify.json") {
			notified++
		}
	}
	if want := c.total - c.deployed; notified != want {
		return fmt.Errorf("%d deployments ran, want %d", notified, want)
	}
	return nil
}

func pass(ctx context.Context, p program, conf, state, workdir string) (benchkit.Sample, string, error) {
	cmd := exec.CommandContext(ctx, p.heatConfig)
	cmd.Env = append(os.Environ(), "HEAT_SHELL_CONFIG="+conf, "HEAT_CONFIG_DEPLOYED="+stateDir(state),
		"HEAT_CONFIG_DEPLOYED_OLD="+stateDir(state), "HEAT_CONFIG_HOOKS="+p.hooks, "HEAT_CONFIG_NOTIFY="+p.notify,
		"HEAT_SCRIPT_WORKING="+filepath.Join(state, "working"), "HEAT_SCRIPT_OUTPUTS="+filepath.Join(state, "outputs"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	s, err := benchkit.Run(cmd)
	return s, out.String(), err
}
