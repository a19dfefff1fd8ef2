package sysctl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/nodeconfig"
)

// Key is the metadata key: an object of parameter names to values.
const Key = "sysctl"

// ApplyName is the os-refresh-config step's name.
const ApplyName = "10-sysctl-apply-config"

// RunApply is 10-sysctl-apply-config: every parameter of the metadata's
// "sysctl" object, in the order of their names, set as sysctl-set-value
// sets one. Unlike the reference, which stopped at the first parameter
// it could not set after setting those before it, every parameter is
// checked before any is written: bad metadata (not an object, a value
// that is not a string or a finite number, a name or a value that its
// file could not hold, a name the kernel does not have, a file that sets
// another value) is one error line naming the key, and nothing changes.
// What the metadata alone shows bad is refused before any command runs,
// `sysctl -a` included.
func RunApply(ctx context.Context, _ []string, env nodeconfig.Env) error {
	log := env.Logger(ApplyName)
	fail := func(err error) error {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	settings, err := fromMetadata(env)
	if err != nil {
		return fail(err)
	}
	if len(settings) == 0 {
		return nil
	}
	kernel, err := known(ctx, env)
	if err != nil {
		return fail(err)
	}
	var todo []setting
	for _, s := range settings {
		pending, err := s.check(env, kernel)
		if err != nil {
			return fail(fmt.Errorf("%s: %v", keyOf(s.name), err))
		}
		if pending {
			todo = append(todo, s)
		}
	}
	for _, s := range todo {
		if err := s.apply(ctx, env); err != nil {
			return fail(fmt.Errorf("%s: %v", keyOf(s.name), err))
		}
	}
	return nil
}

// fromMetadata reads the settings, sorted by name (jq's keys order), and
// refuses one whose name or value its file could not hold. A missing or
// null key, or an empty string (what the reference's --key-default ”
// printed), is no setting.
func fromMetadata(env nodeconfig.Env) ([]setting, error) {
	v, found, err := env.Lookup(Key)
	if err != nil {
		return nil, err
	}
	if !found || v == "" {
		return nil, nil
	}
	obj, ok := v.(*jsondoc.Object)
	if !ok {
		return nil, fmt.Errorf("%s: not an object of parameter names to values", Key)
	}
	out := make([]setting, 0, obj.Len())
	for i := 0; i < obj.Len(); i++ {
		name, val := obj.At(i)
		text, err := valueText(val)
		if err == nil {
			err = checkName(name)
		}
		if err == nil {
			err = checkValue(text)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", keyOf(name), err)
		}
		out = append(out, setting{name: name, value: text, comment: DefaultComment})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// keyOf is the metadata key of a parameter, for a message.
func keyOf(name string) string { return Key + "." + nodeconfig.KeyText(name) }

// valueText is the value as the reference's `jq -r -a` printed it with
// jq 1.5, which TripleO's nodes had: a string as it is (jq 1.5's -r
// wins over -a: its UTF-8 raw), a number as jq prints a double (1e+16,
// 65536 for 65536.0). Integers keep all their digits (jq rounded those
// past 2^53 to a double). A number that is not finite (Python's NaN and
// Infinity, or past a double) is refused: jq printed null or the
// largest double, which no kernel parameter takes.
func valueText(v jsondoc.Value) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case jsondoc.Number:
		if !x.IsFloat {
			return x.Text, nil
		}
		if math.IsNaN(x.Float) || math.IsInf(x.Float, 0) {
			return "", fmt.Errorf("the value %s is not a finite number", x.Text)
		}
		return nodeconfig.JQNumber(x.Float), nil
	}
	return "", errors.New("the value is not a string or a number")
}
