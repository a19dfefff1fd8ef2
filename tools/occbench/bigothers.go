package main

// The other programs of the memory target, each on about 100 MB, the
// reference beside it: os-apply-config on a metadata file (the big
// local file), 55-heat-config on one deployment whose config is that
// document (a hook that only reads it), heat-config-notify on a hook
// result whose deploy_stdout is that document's text, signalled to a
// loopback CFN endpoint. Each side's output is compared: the rendered
// file, the deployed state file, the signal body.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

// bigProgram is one program's run on its big input, for either side.
type bigProgram struct {
	name  string
	input int // bytes
	// cmd is the side's command ("ref" or "ours"; nil: the side cannot
	// run here); digest is what it produced, to compare.
	cmd    func(label string) *exec.Cmd
	digest func(label string) (string, error)
}

// bigOthers measures os-apply-config, 55-heat-config and
// heat-config-notify; corpus is the big local file (n bytes).
func bigOthers(ctx context.Context, stdout io.Writer, ref, ours, agents, dir, corpus string, n int) error {
	bin := filepath.Dir(ours)
	progs := []func() (bigProgram, error){
		func() (bigProgram, error) { return bigApplyConfig(ctx, bin, dir, corpus, n) },
		func() (bigProgram, error) { return bigHeatConfig(ctx, bin, agents, dir, n) },
	}
	srv, err := newSignalServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	progs = append(progs, func() (bigProgram, error) { return bigNotify(ctx, bin, agents, dir, n, srv) })
	for _, mk := range progs {
		p, err := mk()
		if err != nil {
			return err
		}
		if err := measureBig(stdout, p, dir); err != nil {
			return err
		}
	}
	return nil
}

// measureBig runs each side once and prints its peak RSS, whether the
// outputs are the same, and the target line.
func measureBig(stdout io.Writer, p bigProgram, dir string) error {
	rss := map[string]float64{}
	digests := map[string]string{}
	refFailed := ""
	for _, label := range []string{"ref", "ours"} {
		cmd := p.cmd(label)
		if cmd == nil {
			continue
		}
		logPath := filepath.Join(dir, p.name+"-"+label+".log")
		log, err := os.Create(logPath)
		if err != nil {
			return err
		}
		cmd.Stdout, cmd.Stderr = log, log
		cmd.Env = append(withStatusDir(cmd.Env, filepath.Join(dir, "status-"+label)), "HEAT_CONFIG_NOTIFY_TOKEN_CACHE=off")
		s, err := benchkit.Run(cmd)
		log.Close()
		rss[label] = float64(s.MaxRSS) / 1024
		if err != nil && label == "ref" {
			// The reference's heat-config-notify dies on a body over
			// its cap (json.dumps(encoding=) is Python 2's): its peak
			// so far is still a figure.
			out, _ := os.ReadFile(logPath)
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			refFailed = fmt.Sprintf("%v: %s", err, lines[len(lines)-1])
			continue
		}
		if err != nil {
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("%s (%s): %v\n%s", p.name, label, err, tailOf(out, 2000))
		}
		if digests[label], err = p.digest(label); err != nil {
			return fmt.Errorf("%s (%s): %v", p.name, label, err)
		}
	}
	inMiB := float64(p.input) / (1 << 20)
	same := "n/a (no reference)"
	refRSS := "n/a"
	if _, ok := rss["ref"]; ok {
		same = fmt.Sprint(digests["ref"] == digests["ours"])
		if refFailed != "" {
			same = "n/a (the reference failed: " + refFailed + ")"
		}
		refRSS = fmt.Sprintf("%.1f", rss["ref"])
	}
	fmt.Fprintf(stdout, "%s on %d bytes (%.1f MiB): peak RSS ref %s MiB, ours %.1f MiB (%.2fx input); output same as ref: %s\n",
		p.name, p.input, inMiB, refRSS, rss["ours"], rss["ours"]/inMiB, same)
	benchkit.MemTarget(p.name, "peak-rss-100mb-input", rss["ours"], int64(p.input)).Print(stdout)
	return nil
}

func tailOf(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// bigApplyConfig renders one template of a few keys from the metadata.
func bigApplyConfig(ctx context.Context, bin, dir, corpus string, n int) (bigProgram, error) {
	tmpl := filepath.Join(dir, "oac-templates")
	if err := os.MkdirAll(filepath.Join(tmpl, "etc"), 0o755); err != nil {
		return bigProgram{}, err
	}
	body := "motd={{service_00001.motd}}\nworkers={{service_00002.workers}}\nopt={{service_00003.option_007}}\n"
	if err := os.WriteFile(filepath.Join(tmpl, "etc", "big.conf"), []byte(body), 0o644); err != nil {
		return bigProgram{}, err
	}
	out := func(label string) string { return filepath.Join(dir, "oac-out-"+label) }
	return bigProgram{name: "os-apply-config", input: n,
		cmd: func(label string) *exec.Cmd {
			os.RemoveAll(out(label))
			os.MkdirAll(out(label), 0o755)
			prog := "/usr/bin/os-apply-config"
			if label == "ours" {
				prog = filepath.Join(bin, "os-apply-config")
			}
			return exec.CommandContext(ctx, prog, "-t", tmpl, "-o", out(label), "-m", corpus, "--fallback-metadata")
		},
		digest: func(label string) (string, error) { return fileDigest(filepath.Join(out(label), "etc", "big.conf")) },
	}, nil
}

const bigDeploymentID = "00000000-0000-4000-8000-00000000b16d"

// writeDeployment writes one deployment (as a list when list) of group
// and transport, whose config is the corpus, and returns its size.
func writeDeployment(path, group string, inputs string, list bool, size int) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := &countWriter{w: bufio.NewWriterSize(f, 1<<20)}
	if list {
		io.WriteString(w, "[")
	}
	fmt.Fprintf(w, `{"id": %q, "name": "big", "group": %q, "creation_time": "2026-11-25T10:00:00Z", "inputs": [%s], "outputs": [], "options": {}, "config": `,
		bigDeploymentID, group, inputs)
	writeCorpus(w, size)
	io.WriteString(w, "}")
	if list {
		io.WriteString(w, "]")
	}
	if err := w.w.(*bufio.Writer).Flush(); err != nil {
		return 0, err
	}
	return w.n, f.Close()
}

func input(name, value string) string {
	return fmt.Sprintf(`{"name": %q, "type": "String", "value": %q, "description": "an input"}`, name, value)
}

// bigHeatConfig runs 55-heat-config on one NO_SIGNAL deployment whose
// config is the corpus, with a hook that reads its stdin and succeeds.
func bigHeatConfig(ctx context.Context, bin, agents, dir string, size int) (bigProgram, error) {
	hc := filepath.Join(dir, "hc")
	hooks := filepath.Join(hc, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return bigProgram{}, err
	}
	hook := "#!/bin/sh\ncat >/dev/null\necho '{\"deploy_stdout\": \"ok\", \"deploy_stderr\": \"\", \"deploy_status_code\": 0}'\n"
	if err := os.WriteFile(filepath.Join(hooks, "big"), []byte(hook), 0o755); err != nil {
		return bigProgram{}, err
	}
	conf := filepath.Join(hc, "deployments.json")
	n, err := writeDeployment(conf, "big", input("deploy_signal_transport", "NO_SIGNAL"), true, size)
	if err != nil {
		return bigProgram{}, err
	}
	heatConfig := filepath.Join(hc, "55-heat-config")
	os.Remove(heatConfig)
	if err := os.Symlink(filepath.Join(bin, "tripleo-agent"), heatConfig); err != nil {
		return bigProgram{}, err
	}
	state := func(label string) string { return filepath.Join(hc, "state-"+label) }
	return bigProgram{name: "55-heat-config", input: n,
		cmd: func(label string) *exec.Cmd {
			prog, notify := heatConfig, filepath.Join(bin, "heat-config-notify")
			if label == "ref" {
				if agents == "" {
					return nil
				}
				prog = filepath.Join(agents, "heat-config/os-refresh-config/configure.d/55-heat-config")
				notify = filepath.Join(agents, "heat-config/bin/heat-config-notify")
			}
			os.RemoveAll(state(label))
			for _, d := range []string{"deployed", "working", "outputs"} {
				os.MkdirAll(filepath.Join(state(label), d), 0o700)
			}
			cmd := exec.CommandContext(ctx, prog)
			cmd.Env = append(os.Environ(), "HEAT_SHELL_CONFIG="+conf, "HEAT_CONFIG_DEPLOYED="+filepath.Join(state(label), "deployed"),
				"HEAT_CONFIG_DEPLOYED_OLD="+filepath.Join(state(label), "deployed"), "HEAT_CONFIG_HOOKS="+hooks, "HEAT_CONFIG_NOTIFY="+notify,
				"HEAT_SCRIPT_WORKING="+filepath.Join(state(label), "working"), "HEAT_SCRIPT_OUTPUTS="+filepath.Join(state(label), "outputs"))
			return cmd
		},
		digest: func(label string) (string, error) {
			return fileDigest(filepath.Join(state(label), "deployed", bigDeploymentID+".json"))
		},
	}, nil
}

// signalServer is a loopback CFN endpoint that keeps a digest of each
// path's last body.
type signalServer struct {
	*http.Server
	url    string
	mu     sync.Mutex
	bodies map[string]string
}

func newSignalServer() (*signalServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &signalServer{url: "http://" + l.Addr().String(), bodies: map[string]string{}}
	s.Server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		io.Copy(h, r.Body)
		s.mu.Lock()
		s.bodies[r.URL.Path] = fmt.Sprintf("%x", h.Sum(nil))
		s.mu.Unlock()
	})}
	go s.Serve(l)
	return s, nil
}

// bigNotify signals a hook result whose deploy_stdout is the corpus's
// text (trimmed by both to what Heat accepts) to the loopback endpoint.
func bigNotify(ctx context.Context, bin, agents, dir string, size int, srv *signalServer) (bigProgram, error) {
	nd := filepath.Join(dir, "notify")
	if err := os.MkdirAll(nd, 0o755); err != nil {
		return bigProgram{}, err
	}
	result := filepath.Join(nd, "result.json")
	f, err := os.Create(result)
	if err != nil {
		return bigProgram{}, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := &countWriter{w: bw}
	io.WriteString(w, `{"deploy_stdout": "`)
	writeCorpus(&quoteWriter{w: w}, size)
	io.WriteString(w, `", "deploy_stderr": "done\n", "deploy_status_code": 0}`)
	if err := bw.Flush(); err != nil {
		return bigProgram{}, err
	}
	if err := f.Close(); err != nil {
		return bigProgram{}, err
	}
	deployment := func(label string) string { return filepath.Join(nd, "deployment-"+label+".json") }
	for _, label := range []string{"ref", "ours"} {
		inputs := input("deploy_signal_transport", "CFN_SIGNAL") + ", " + input("deploy_signal_id", srv.url+"/"+label)
		if _, err := writeDeployment(deployment(label), "script", inputs, false, 1000); err != nil {
			return bigProgram{}, err
		}
	}
	return bigProgram{name: "heat-config-notify", input: w.n,
		cmd: func(label string) *exec.Cmd {
			prog := filepath.Join(bin, "heat-config-notify")
			if label == "ref" {
				if agents == "" {
					return nil
				}
				prog = filepath.Join(agents, "heat-config/bin/heat-config-notify")
			}
			cmd := exec.CommandContext(ctx, prog, deployment(label))
			cmd.Env = os.Environ()
			in, err := os.Open(result)
			if err == nil {
				cmd.Stdin = in // closed by the process's exit; one per run
			}
			return cmd
		},
		digest: func(label string) (string, error) {
			srv.mu.Lock()
			defer srv.mu.Unlock()
			d, ok := srv.bodies["/"+label]
			if !ok {
				return "", fmt.Errorf("no signal reached the endpoint")
			}
			return d, nil
		},
	}, nil
}

// quoteWriter writes text as the inside of a JSON string (the corpus is
// ASCII without control characters but its final newline).
type quoteWriter struct{ w io.Writer }

func (q *quoteWriter) Write(p []byte) (int, error) {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	if _, err := io.WriteString(q.w, r.Replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
