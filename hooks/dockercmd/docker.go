package dockercmd

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/secret"
)

// Docker runs the container command (docker or podman) for the hook and
// for 50-heat-config-docker-cmd, logging each call as the reference did.
type Docker struct {
	// Cmd is the command: a name looked up in PATH, or a path.
	Cmd string
	Env hooks.Env
	// Redactor hides the deployment's credentials in the log lines.
	Redactor *secret.Redactor
}

// Execute runs argv (argv[0] is Cmd) under the hooks' deadline, with the
// reference's debug lines: the command, then its stdout and stderr as
// Python bytes.
func (dk Docker) Execute(ctx context.Context, argv []string) hooks.Outcome {
	log := dk.Env.Logger()
	log.Debug("execute command: " + dk.shown(argv))
	out := dk.Env.RunTool(ctx, hooks.Tool{Argv: argv})
	log.Debug(dk.redact(jsondoc.PyReprBytes(out.RawStdout)))
	log.Debug(dk.redact(jsondoc.PyReprBytes(out.RawStderr)))
	if out.Note != "" {
		log.Warn(out.Note)
	}
	return out
}

func (dk Docker) redact(s string) string {
	if dk.Redactor == nil {
		return s
	}
	return dk.Redactor.Redact(s)
}

// shown is argv as the reference logged it (a Python list), with the
// values of credential-named variables (--env=DB_PASSWORD=...) and the
// deployment's credentials hidden.
func (dk Docker) shown(argv []string) string {
	items := make([]jsondoc.Value, len(argv))
	for i, a := range argv {
		if kv, ok := strings.CutPrefix(a, "--env="); ok {
			if k, v, ok := strings.Cut(kv, "="); ok {
				a = "--env=" + k + "=" + hooks.LogValue(k, v)
			}
		}
		items[i] = a
	}
	return dk.redact(jsondoc.PyRepr(items))
}

// maxNameTries bounds the search for a free container name: a command
// that says every name exists would otherwise keep the hook forever.
const maxNameTries = 100

// UniqueName is name when no container has it, else name-XXXXXXXX with
// eight random lower-case letters and digits, as the reference: the old
// deployment's container keeps running until 50-heat-config-docker-cmd
// removes it and renames this one.
func (dk Docker) UniqueName(ctx context.Context, name string) (string, error) {
	candidate := name
	for range maxNameTries {
		if !dk.exists(ctx, candidate) {
			return candidate, nil
		}
		candidate = name + "-" + randomSuffix()
	}
	return "", fmt.Errorf("no free name for container %q after %d tries: %s says each exists", name, maxNameTries, dk.Cmd)
}

// exists is `inspect --format exists NAME` succeeding with output.
func (dk Docker) exists(ctx context.Context, name string) bool {
	out := dk.Execute(ctx, []string{dk.Cmd, "inspect", "--format", "exists", name})
	return out.Status == 0 && len(out.RawStdout) > 0
}

func randomSuffix() string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	for i := range b {
		b[i] = chars[rand.IntN(len(chars))]
	}
	return string(b)
}

// DiscoverName is the name of the container labelled container_name=name
// by the deployment configID (the first listed), or name when there is
// none or the listing fails.
func (dk Docker) DiscoverName(ctx context.Context, name, configID string) string {
	out := dk.Execute(ctx, []string{dk.Cmd, "ps", "-a",
		"--filter", "label=" + LabelContainerName + "=" + name,
		"--filter", "label=" + LabelConfigID + "=" + configID,
		"--format", "{{.Names}}"})
	if out.Status != 0 {
		return name
	}
	if names := strings.Fields(out.Stdout); len(names) > 0 {
		return names[0]
	}
	return name
}

// LabelFormat is the ps --format template printing a container's label
// key: docker's {{.Label "key"}} (the reference's), or for podman, which
// has no .Label, {{index .Labels "key"}}.
func (dk Docker) LabelFormat(key string) string {
	if filepath.Base(dk.Cmd) == "podman" {
		return `{{index .Labels "` + key + `"}}`
	}
	return `{{.Label "` + key + `"}}`
}
