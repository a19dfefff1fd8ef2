package sysctl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/nodeconfig"
)

// A setting is one parameter to set.
type setting struct{ name, value, comment string }

// known are the parameters the kernel has, as `sysctl -a` lists them.
func known(ctx context.Context, env nodeconfig.Env) (map[string]bool, error) {
	var out bytes.Buffer
	quiet := env
	quiet.Stderr = io.Discard // permission notes on keys only root reads
	// Its status is not looked at, as the reference's pipe to grep did
	// not: a key that cannot be read may fail it, the list still counts.
	if err := quiet.Command(ctx, &out, "sysctl", "-a"); err != nil && out.Len() == 0 {
		return nil, err
	}
	names := map[string]bool{}
	for _, l := range strings.Split(out.String(), "\n") {
		if name, _, ok := strings.Cut(l, " = "); ok {
			names[name] = true
		} else if name, ok := strings.CutSuffix(l, " ="); ok {
			names[name] = true // an empty value
		}
	}
	return names, nil
}

// check refuses a setting the kernel does not have, or one its file
// already sets to another value; pending is false when the file already
// sets this value (nothing to do, as the reference). Its name and value
// were checked before (checkName, checkValue), before any command ran.
func (s setting) check(env nodeconfig.Env, kernel map[string]bool) (pending bool, err error) {
	text, exists, err := current(env, s.name)
	if err != nil {
		return false, err
	}
	if exists {
		if hasSetting(text, s.name, s.value) {
			return false, nil
		}
		return false, fmt.Errorf("Conflicting sysctl.conf setting for %s == %s. Found: %s",
			s.name, s.value, strings.Join(settingLines(text, s.name), " | "))
	}
	if !kernel[s.name] {
		return false, fmt.Errorf("Invalid sysctl key: %s", s.name)
	}
	return true, nil
}

// apply writes the setting's file and loads it with `sysctl -p`. A file
// the kernel refuses is removed again, so that the next run tries (and
// reports) it again instead of finding it "already set".
func (s setting) apply(ctx context.Context, env nodeconfig.Env) error {
	if err := write(env, s.name, s.value, s.comment); err != nil {
		return err
	}
	path := fileOf(env, s.name)
	if err := env.Command(ctx, nil, "sysctl", "-p", path); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// RunSet is sysctl-set-value NAME VALUE [COMMENT]: checks the parameter
// (the kernel has it; its file, if any, sets the same value), then
// writes its file and loads it.
func RunSet(ctx context.Context, args []string, env nodeconfig.Env) error {
	log := env.Logger("sysctl-set-value")
	s := setting{name: arg(args, 0), value: arg(args, 1), comment: arg(args, 2)}
	if s.comment == "" {
		s.comment = DefaultComment
	}
	if s.name == "" || s.value == "" {
		log.Error("NAME and VALUE are required.")
		return exitcode.With(exitcode.Failure, nil)
	}
	fail := func(err error) error {
		log.Error(fmt.Sprintf("%s: %v", nodeconfig.KeyText(s.name), err))
		return exitcode.With(exitcode.Failure, err)
	}
	for _, err := range []error{checkName(s.name), checkValue(s.value)} {
		if err != nil {
			return fail(err)
		}
	}
	// The kernel's list is only needed for a new file.
	var kernel map[string]bool
	if _, exists, _ := current(env, s.name); !exists {
		var err error
		if kernel, err = known(ctx, env); err != nil {
			return fail(err)
		}
	}
	pending, err := s.check(env, kernel)
	if err != nil {
		return fail(err)
	}
	if pending {
		if err := s.apply(ctx, env); err != nil {
			return fail(err)
		}
	}
	return nil
}

// RunWrite is sysctl-write-value NAME VALUE [COMMENT]: writes the
// parameter's file and nothing else (no check, no load), for image
// builds.
func RunWrite(_ context.Context, args []string, env nodeconfig.Env) error {
	log := env.Logger("sysctl-write-value")
	name, value, comment := arg(args, 0), arg(args, 1), arg(args, 2)
	if comment == "" {
		comment = DefaultComment
	}
	if name == "" || value == "" {
		log.Error("Usage: sysctl-write-value <name> <value> [comment]")
		return exitcode.With(exitcode.Failure, nil)
	}
	for _, err := range []error{checkName(name), checkValue(value)} {
		if err != nil {
			log.Error(fmt.Sprintf("%s: %v", nodeconfig.KeyText(name), err))
			return exitcode.With(exitcode.Failure, err)
		}
	}
	if err := write(env, name, value, comment); err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	return nil
}

// arg is args[i], or "" (the shell's ${N:-}).
func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}
