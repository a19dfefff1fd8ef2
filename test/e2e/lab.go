// Package e2e runs os-collect-config against a real Keystone, Heat, Swift
// and Zaqar on 127.0.0.1: the lab in lab/ (bash; Debian's packages, no
// systemd), brought up once by TestMain and stopped at the end.
//
// It needs root and runs only when asked: E2E=1 (skips when it cannot run)
// or REQUIRE_E2E=1 (fails instead; make e2e). E2E_DIR moves the lab's state
// (default /var/tmp/tripleo-agent-e2e); E2E_KEEP=1 leaves the lab running.
//
// This file holds the helpers the tests (and the collector tests to come)
// call: the lab's scripts, stacks, running a program with a deadline, and
// counting the HTTP requests that reached each service.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

// The lab TestMain brought up, and the directory it builds the programs
// in; here rather than in a test file so that the helpers beside them
// build with the module (go build ./...).
var (
	lab      *Lab
	buildDir string
)

// Transports of a server's software_config_transport.
const (
	PollServerCFN  = "POLL_SERVER_CFN"
	PollServerHeat = "POLL_SERVER_HEAT"
	PollTempURL    = "POLL_TEMP_URL"
	ZaqarMessage   = "ZAQAR_MESSAGE"
)

// Names of the deployments in every lab stack (lab/py/stack.py).
const (
	ScriptDeployment     = "e2e-deployment" // group script: stays in "deployments"
	StructuredDeployment = "e2e-structured" // group os-apply-config: exploded into its own key
)

// Lab is the lab under lab/: its scripts and its state directory.
type Lab struct {
	Scripts string // the directory of up, down, stack, ...
	Dir     string // E2E_DIR: configuration, logs, PID files, stacks
}

// NewLab finds the scripts next to this file; the state directory is
// E2E_DIR or the scripts' default.
func NewLab() (*Lab, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("cannot find the e2e package's directory")
	}
	l := &Lab{Scripts: filepath.Join(filepath.Dir(file), "lab"), Dir: os.Getenv("E2E_DIR")}
	if l.Dir == "" {
		l.Dir = "/var/tmp/tripleo-agent-e2e"
	}
	return l, nil
}

func (l *Lab) env() []string { return append(os.Environ(), "E2E_DIR="+l.Dir) }

// Script runs one of the lab's scripts with a deadline; its stderr goes to
// log (if not nil), its stdout is returned.
func (l *Lab) Script(ctx context.Context, timeout time.Duration, log io.Writer, name string, args ...string) (string, error) {
	res, err := Run(ctx, timeout, Cmd{Argv: append([]string{filepath.Join(l.Scripts, name)}, args...), Env: l.env(), Stderr: log})
	if err != nil {
		return string(res.Stdout), fmt.Errorf("lab %s %s: %w\n%s", name, strings.Join(args, " "), err, tail(res.Stderr, 2000))
	}
	return string(res.Stdout), nil
}

// Running tells whether every service of the lab runs (lab/status).
func (l *Lab) Running(ctx context.Context) bool {
	_, err := l.Script(ctx, time.Minute, nil, "status")
	return err == nil
}

// Up installs what is missing and starts what is not running (lab/up).
func (l *Lab) Up(ctx context.Context, log io.Writer) error {
	_, err := l.Script(ctx, 30*time.Minute, log, "up")
	return err
}

// Down stops what the lab started (lab/down).
func (l *Lab) Down(ctx context.Context, log io.Writer) error {
	_, err := l.Script(ctx, 10*time.Minute, log, "down")
	return err
}

// Stack is a lab stack as lab/stack left it: the files of its server's
// metadata and the os-collect-config section (the agent's configuration).
type Stack struct {
	Name, ID, Transport, Signal, Greeting string
	Dir                                   string         // $E2E_DIR/stacks/NAME
	OCC                                   map[string]any // the server metadata's "os-collect-config"
	OCCJSON                               string         // path of os-collect-config.json
	ConfPath                              string         // path of os-collect-config.conf (oslo.config, for the Python agent)
	Metadata                              map[string]any // the whole server metadata
}

// CreateStack (re)creates stack name with a DeployedServer whose metadata
// goes through transport, a script deployment signalling through signal
// (NO_SIGNAL: complete at once) and an os-apply-config deployment, both
// with input greeting; it returns once the server's metadata (and, for
// POLL_TEMP_URL, the Swift object; for ZAQAR_MESSAGE, the queue's newest
// message) holds both deployments.
func (l *Lab) CreateStack(ctx context.Context, name, transport, signal, greeting string) (*Stack, error) {
	return l.stack(ctx, "create", name, "--replace", "--transport", transport, "--signal", signal, "--greeting", greeting)
}

// UpdateStack sets a new greeting (openstack stack update --existing) and
// returns once the metadata reflects it.
func (l *Lab) UpdateStack(ctx context.Context, s *Stack, greeting string) (*Stack, error) {
	return l.stack(ctx, "update", s.Name, "--greeting", greeting)
}

// DeleteStack deletes a stack (waits until it is gone).
func (l *Lab) DeleteStack(ctx context.Context, name string) error {
	_, err := l.Script(ctx, 6*time.Minute, nil, "stack", "delete", name)
	return err
}

func (l *Lab) stack(ctx context.Context, args ...string) (*Stack, error) {
	var log bytes.Buffer
	out, err := l.Script(ctx, 6*time.Minute, &log, "stack", args...)
	if err != nil {
		return nil, err
	}
	dir := strings.TrimSpace(out)
	s := &Stack{Dir: dir, OCCJSON: filepath.Join(dir, "os-collect-config.json"),
		ConfPath: filepath.Join(dir, "os-collect-config.conf")}
	var info struct{ Name, ID, Transport, Signal, Greeting string }
	for file, v := range map[string]any{"stack.json": &info, "os-collect-config.json": &s.OCC, "server-metadata.json": &s.Metadata} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	s.Name, s.ID, s.Transport, s.Signal, s.Greeting = info.Name, info.ID, info.Transport, info.Signal, info.Greeting
	labSecrets.AddMetadata(s.Name, s.Metadata)
	return s, nil
}

// Cmd is a program to run.
type Cmd struct {
	Argv   []string
	Env    []string // nil: this process's environment
	Dir    string
	Stderr io.Writer // also receives the program's stderr, if not nil
}

// Result is what Run saw.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int // -1 if killed by a signal
	Duration       time.Duration
	TimedOut       bool
}

// Run runs a program in its own process group with a deadline: when
// timeout passes (or ctx ends) the group gets SIGTERM, and SIGKILL 10 s
// later. The group is killed at the end in any case, so nothing it
// started outlives it. A non-zero exit is an error.
func Run(ctx context.Context, timeout time.Duration, c Cmd) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if c.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, c.Stderr)
	}
	t0 := time.Now()
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Duration: time.Since(t0), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		res.TimedOut = true
		return res, fmt.Errorf("%s: deadline (%s) passed: %v", c.Argv[0], timeout, err)
	}
	return res, err
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Request counting. Every service writes one line per HTTP request it
// served to a log file of the lab; a Mark remembers where each file ends,
// and Count reads what was added since. What counts as a request line:
var requestLogs = []struct {
	service, file string
	line          *regexp.Regexp // submatch 1: method, 2: path
}{
	// uwsgi --log-format 'REQ %(method) %(uri) %(status) ua="%(uagent)"'
	{"keystone", "log/keystone-uwsgi.log", regexp.MustCompile(`^REQ (\S+) (\S+) `)},
	// eventlet.wsgi.server: ... "GET /v1/... HTTP/1.1" 200 ...
	{"heat-api", "log/heat-api.log", regexp.MustCompile(`eventlet\.wsgi\.server .*"(\S+) (\S+) HTTP/`)},
	{"heat-api-cfn", "log/heat-api-cfn.log", regexp.MustCompile(`eventlet\.wsgi\.server .*"(\S+) (\S+) HTTP/`)},
	// proxy-logging: swift-proxy: CLIENT REMOTE DATE METHOD PATH HTTP/1.0 ...
	// Requests the proxy makes itself (e.g. tempurl's container and
	// account HEADs) have "-" as client and count as swift-internal.
	{"swift", "log/swift-proxy.out", regexp.MustCompile(`^swift-proxy: [0-9]\S* \S+ \S+ (\S+) (\S+) HTTP/`)},
	{"swift-internal", "log/swift-proxy.out", regexp.MustCompile(`^swift-proxy: - - \S+ (\S+) (\S+) HTTP/`)},
	// wsgiref: 127.0.0.1 - - [date] "GET /v2/... HTTP/1.1" 200 85
	{"zaqar", "log/zaqar.out", regexp.MustCompile(`^\S+ - - \[[^]]*\] "(\S+) (\S+) HTTP/`)},
}

// AgentKeystone counts the Keystone requests the agent itself made, told
// from the services' own (token checks, their service tokens) by the
// user agent (python-keystoneclient for the reference, gophercloud or our
// HTTP client for ours) and by what they ask (discovery, tokens).
const AgentKeystone = "keystone from the agent"

var agentUA = regexp.MustCompile(`ua="(python-keystoneclient|gophercloud/|os-collect-config/)`)

// Mark is a moment in the lab's request logs.
type Mark struct {
	lab     *Lab
	offsets map[string]int64
}

// Mark remembers the current end of every request log.
func (l *Lab) Mark() *Mark {
	m := &Mark{lab: l, offsets: map[string]int64{}}
	for _, r := range requestLogs {
		if fi, err := os.Stat(filepath.Join(l.Dir, r.file)); err == nil {
			m.offsets[r.file] = fi.Size()
		}
	}
	return m
}

// Counts holds the requests per service ("keystone", "heat-api",
// "heat-api-cfn", "swift", "zaqar") and per service and kind of request
// ("keystone POST /v3/auth/tokens"; paths with IDs shortened).
type Counts map[string]int

// Count returns the requests logged since the mark. Log lines are written
// after the answer, so it waits until the counts stay the same for half a
// second (at most 5 s).
func (m *Mark) Count() Counts {
	var last Counts
	for i := 0; i < 10; i++ {
		c := m.count()
		if last != nil && c.String() == last.String() {
			return c
		}
		last = c
		time.Sleep(500 * time.Millisecond)
	}
	return last
}

func (m *Mark) count() Counts {
	c := Counts{}
	for _, r := range requestLogs {
		c[r.service] += 0
		f, err := os.Open(filepath.Join(m.lab.Dir, r.file))
		if err != nil {
			continue
		}
		if _, err := f.Seek(m.offsets[r.file], io.SeekStart); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				sm := r.line.FindStringSubmatch(sc.Text())
				if sm == nil || strings.HasSuffix(sm[2], "/healthcheck") {
					continue
				}
				c[r.service]++
				c[r.service+" "+sm[1]+" "+shortPath(sm[2])]++
				// GET /v3/auth/tokens is a service checking a token
				// (zaqar's websocket server does it as python-keystoneclient).
				if r.service == "keystone" && agentUA.MatchString(sc.Text()) && !(sm[1] == "GET" && sm[2] == "/v3/auth/tokens") {
					c[AgentKeystone]++
				}
			}
		}
		f.Close()
	}
	return c
}

var idLike = regexp.MustCompile(`^([0-9a-f]{32}|[0-9a-f-]{36}|AUTH_[0-9a-f]{32}|tx.*)$`)

// shortPath drops the query (swift logs it quoted: %3F) and replaces
// ID-like and long segments (stack, container, object names) by "*", so
// that one poll's requests are grouped by kind. Zaqar's swift containers
// keep their kind: zaqar_message%253A<queue>%253A<project> -> zaqar_message.
func shortPath(p string) string {
	for _, q := range []string{"?", "%3F"} {
		if i := strings.Index(p, q); i >= 0 {
			p = p[:i]
		}
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if j := strings.Index(s, "%253A"); j >= 0 {
			s = s[:j]
		}
		if idLike.MatchString(s) || len(s) > 24 {
			s = "*"
		}
		segs[i] = s
	}
	return strings.Join(segs, "/")
}

// String lists the counts, totals first: "keystone=3 heat-api=1 ... |
// keystone POST /v3/auth/tokens=1 ...".
func (c Counts) String() string {
	var totals, kinds []string
	for k, v := range c {
		if strings.Contains(k, " ") {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, v))
		}
	}
	for _, r := range requestLogs {
		totals = append(totals, fmt.Sprintf("%s=%d", r.service, c[r.service]))
	}
	sort.Strings(kinds)
	return strings.Join(totals, " ") + " | " + strings.Join(kinds, ", ")
}
