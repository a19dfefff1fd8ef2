package sysctl

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

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
// that is not a string or a number, a name the kernel does not have, a
// file that sets another value) is one error line naming the key, and
// nothing changes.
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
			return fail(fmt.Errorf("%s.%s: %v", Key, s.name, err))
		}
		if pending {
			todo = append(todo, s)
		}
	}
	for _, s := range todo {
		if err := s.apply(ctx, env); err != nil {
			return fail(fmt.Errorf("%s.%s: %v", Key, s.name, err))
		}
	}
	return nil
}

// fromMetadata reads the settings, sorted by name (jq's keys order). A
// missing or null key, or an empty string (what the reference's
// --key-default ” printed), is no setting.
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
		text, ok := valueText(val)
		if !ok {
			return nil, fmt.Errorf("%s.%s: the value is not a string or a number", Key, name)
		}
		out = append(out, setting{name: name, value: text, comment: DefaultComment})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// valueText is the value as the reference's `jq -r -a` printed it: a
// string raw with its non-ASCII characters as \uXXXX escapes, a number
// in decimal. Integers keep all their digits (jq 1.6 rounded those past
// 2^53 to a double).
func valueText(v jsondoc.Value) (string, bool) {
	switch x := v.(type) {
	case string:
		return asciiEscape(x), true
	case jsondoc.Number:
		if !x.IsFloat {
			return x.Text, true
		}
		if x.Float == math.Trunc(x.Float) && math.Abs(x.Float) < 1e17 {
			return strconv.FormatFloat(x.Float, 'f', -1, 64), true
		}
		return x.Text, true
	}
	return "", false
}

// asciiEscape writes each non-ASCII character as jq -a does: \uXXXX,
// a surrogate pair past U+FFFF.
func asciiEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, "\\u%04x\\u%04x", 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}
