// Package kubelet is the hook of group "kubelet": the deployment's
// config is a pod, which the node's kubelet starts from the manifest the
// element's configure.d script (Configure) wrote before the hooks run.
// The hook waits until the pod's images are there, then its containers
// (named by the kubelet's k8s_<container>.<hash>_<pod> scheme), asking
// Docker through its command line where the reference used docker-py.
package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
)

// Hook is the kubelet hook.
var Hook = hooks.Hook{
	Group:   "kubelet",
	Summary: "waits until the images and the containers of the pod the config describes are there, started by the kubelet",
	Run:     Run,
	Scripts: []hooks.Script{Configure},
}

// Settings, with their defaults.
const (
	// DockerCmdVar is the docker command line the hook asks (ours: the
	// reference used docker-py, which is not packaged any more).
	DockerCmdVar     = "HEAT_KUBELET_DOCKER_CMD"
	DefaultDockerCmd = "docker"
	// DockerHostVar is where Docker listens, as docker-py and the docker
	// command read it.
	DockerHostVar       = "DOCKER_HOST"
	DefaultDockerHost   = "unix:///var/run/docker.sock"
	DefaultImagesWait   = "600"
	DefaultContainers   = "120"
	DefaultPollPeriod   = "5"
	imagesFormat        = "{{.Repository}}:{{.Tag}}"
	containersFormat    = "{{.Names}}"
	serverVersionFormat = "{{.Server.APIVersion}}"
)

// Run waits for the pod and reports what it saw: deploy_stdout is the
// hook's log (DEBUG and up), deploy_stderr its warnings and errors, the
// status 1 when an image or a container did not come in time.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	var stdout, stderr strings.Builder
	log := teeLogger(env, &stdout, &stderr)
	w := &waiter{ctx: ctx, env: env, log: log, docker: env.Setting(DockerCmdVar, DefaultDockerCmd)}
	state := 0
	if err := w.pod(d); err != nil {
		state = 1
		log.Error("An error occurred deploying pod " + d.ID())
		log.Error(err.Error())
	}
	return hooks.Status(nil, stdout.String(), stderr.String(), state), nil
}

// teeLogger logs to the hook's log and, in the same format, to stdout
// (everything) and stderr (warnings and errors), as the reference's
// three handlers did.
func teeLogger(env hooks.Env, stdout, stderr *strings.Builder) *slog.Logger {
	opts := func(l slog.Level) logging.Options {
		return logging.Options{Level: l, Prefix: logging.PythonPrefix(hooks.LoggerName), QuietAttrs: true}
	}
	return slog.New(teeHandler{env.Logger().Handler(),
		logging.New(stdout, opts(slog.LevelDebug)).Handler(), logging.New(stderr, opts(slog.LevelWarn)).Handler()})
}

type teeHandler []slog.Handler

func (t teeHandler) Enabled(context.Context, slog.Level) bool { return true }

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			_ = h.Handle(ctx, r.Clone())
		}
	}
	return nil
}

func (t teeHandler) WithAttrs(a []slog.Attr) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(a)
	}
	return out
}

func (t teeHandler) WithGroup(string) slog.Handler { return t }

type waiter struct {
	ctx    context.Context
	env    hooks.Env
	log    *slog.Logger
	docker string
}

// pod is the reference's try block: connect, wait for the images, then
// for the containers.
func (w *waiter) pod(d *deployment.Deployment) error {
	host := w.env.Setting(DockerHostVar, DefaultDockerHost)
	w.log.Debug("Connecting to " + host)
	version, err := w.ask("version", "--format", serverVersionFormat)
	if err != nil {
		return err
	}
	w.log.Debug("Connected to version " + strings.Join(version, " "))
	imagesTimeout, err := seconds(d, "images_timeout", DefaultImagesWait)
	if err != nil {
		return err
	}
	containersTimeout, err := seconds(d, "containers_timeout", DefaultContainers)
	if err != nil {
		return err
	}
	poll, err := seconds(d, "poll_period", DefaultPollPeriod)
	if err != nil {
		return err
	}
	containers, err := PodContainers(d.Config())
	if err != nil {
		return err
	}
	if err := w.images(RequiredImages(containers), imagesTimeout, poll); err != nil {
		return err
	}
	return w.containers(RequiredContainerPatterns(d.ID(), containers), containersTimeout, poll)
}

// timeout is an option in seconds with its text, as the messages show it.
type timeout struct {
	text string
	d    time.Duration
}

func seconds(d *deployment.Deployment, name, def string) (timeout, error) {
	text := def
	if v, ok := d.Option(name); ok && v != nil {
		n, isNum := v.(jsondoc.Number)
		if !isNum {
			return timeout{}, fmt.Errorf("option %s is not a number of seconds: %s", name, jsondoc.Dumps(v))
		}
		text = n.Text
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f < 0 || f > 1e9 {
		return timeout{}, fmt.Errorf("option %s is not a number of seconds: %s", name, text)
	}
	return timeout{text: text, d: time.Duration(f * float64(time.Second))}, nil
}

// ask runs the docker command with args and returns its output lines.
func (w *waiter) ask(args ...string) ([]string, error) {
	out := w.env.RunTool(w.ctx, hooks.Tool{Argv: append([]string{w.docker}, args...)})
	if out.Status != 0 {
		return nil, fmt.Errorf("%s %s: exit status %d: %s", w.docker, args[0], out.Status, strings.TrimSpace(out.Stderr))
	}
	return strings.Fields(out.Stdout), nil
}

// sleep waits a poll period, or less when the hook is stopped.
func (w *waiter) sleep(d time.Duration) error {
	if d <= 0 {
		return w.ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// images polls `docker images` until a tag of each image is there.
func (w *waiter) images(images []string, limit, poll timeout) error {
	w.log.Info("Waiting for images: " + strings.Join(images, ", "))
	deadline := time.Now().Add(limit.d)
	var waiting []string
	for _, image := range images {
		if !strings.Contains(image, ":") {
			image += ":" // any tag of it
		}
		waiting = append(waiting, image)
	}
	for len(waiting) > 0 {
		tags, err := w.ask("images", "--format", imagesFormat)
		if err != nil {
			return err
		}
		waiting = slices.DeleteFunc(waiting, func(prefix string) bool {
			for _, tag := range tags {
				if strings.HasPrefix(tag, prefix) {
					w.log.Info("Found image: " + tag)
					return true
				}
			}
			return false
		})
		if len(waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Timed out after %s seconds waiting for matching images: %s", limit.text, strings.Join(waiting, ", "))
		}
		if err := w.sleep(poll.d); err != nil {
			return err
		}
	}
	return nil
}

// containers polls `docker ps` until a running container matches each
// pattern.
func (w *waiter) containers(patterns []Pattern, limit, poll timeout) error {
	var shown []string
	for _, p := range patterns {
		shown = append(shown, p.Regexp)
	}
	w.log.Info("Waiting for containers matching: " + strings.Join(shown, ", "))
	deadline := time.Now().Add(limit.d)
	waiting := map[string]*regexp.Regexp{}
	for _, p := range patterns {
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return fmt.Errorf("container %q: %w", p.Name, err)
		}
		waiting[p.Regexp] = re
	}
	for len(waiting) > 0 {
		lines, err := w.ask("ps", "--format", containersFormat)
		if err != nil {
			return err
		}
		for _, line := range lines {
			for _, name := range strings.Split(line, ",") {
				name = "/" + name // docker-py's Names start with a slash
				for _, p := range shown {
					if re, ok := waiting[p]; ok && re.MatchString(name) {
						w.log.Info(fmt.Sprintf("Pattern %s matches: %s", p, name))
						delete(waiting, p)
						break
					}
				}
			}
		}
		if len(waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			var left []string
			for _, p := range shown {
				if _, ok := waiting[p]; ok {
					left = append(left, p)
				}
			}
			return fmt.Errorf("Timed out after %s seconds waiting for matching containers: %s", limit.text, strings.Join(left, ", "))
		}
		if err := w.sleep(poll.d); err != nil {
			return err
		}
	}
	return nil
}
