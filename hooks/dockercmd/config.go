package dockercmd

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pystr"
	"github.com/tripleo-go/agent/internal/pyyaml"
)

// container is one entry of the config, checked and turned into the
// arguments of its command.
type container struct {
	Name   string
	Action string // "run" or "exec"
	// RunArgs follow the labels of `run`: the options, the image and the
	// command.
	RunArgs []string
	// ExecArgs are the options of `exec`; Command[0] is the container
	// entered, the rest what runs in it.
	ExecArgs, Command []string
	order             float64
	exitCodes         []jsondoc.Value
}

// accepts tells whether status is one of the container's exit_codes,
// compared as Python's `in` does (1 == 1.0 == True).
func (c container) accepts(status int) bool {
	for _, v := range c.exitCodes {
		if n, ok := number(v); ok && n == float64(status) {
			return true
		}
	}
	return false
}

// parseConfig reads the config (an object, or YAML text holding one) into
// its containers, sorted by start_order (0 by default; equal orders keep
// the config's order). Everything is checked before any container runs:
// where the reference crashed part way through (an unknown action, exec
// without a command, exit_codes not a list, a start_order not a number),
// this refuses the deployment whole.
func parseConfig(v jsondoc.Value) ([]container, error) {
	if s, ok := v.(string); ok {
		loaded, err := pyyaml.SafeLoad([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", hooks.ErrConfig, err)
		}
		if loaded == nil { // only comments: nothing to run
			return nil, nil
		}
		v = loaded
	}
	obj, ok := v.(*jsondoc.Object)
	if !ok {
		return nil, fmt.Errorf("%w: the config is %s, not an object of containers", hooks.ErrConfig, kind(v))
	}
	out := make([]container, 0, obj.Len())
	for i := 0; i < obj.Len(); i++ {
		name, cv := obj.At(i)
		cc, ok := cv.(*jsondoc.Object)
		if !ok {
			return nil, fmt.Errorf("%w: container %q is %s, not an object", hooks.ErrConfig, name, kind(cv))
		}
		c, err := parseContainer(name, cc)
		if err != nil {
			return nil, fmt.Errorf("%w: container %q: %v", hooks.ErrConfig, name, err)
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out, nil
}

func parseContainer(name string, cc *jsondoc.Object) (container, error) {
	c := container{Name: name, Action: "run", exitCodes: []jsondoc.Value{jsondoc.Int(0)}}
	if v, ok := cc.Get("start_order"); ok {
		n, ok := number(v)
		if !ok {
			return c, fmt.Errorf("start_order is %s, not a number", kind(v))
		}
		c.order = n
	}
	if v, ok := cc.Get("action"); ok {
		c.Action = jsondoc.PyStr(v)
	}
	if v, ok := cc.Get("exit_codes"); ok {
		list, ok := v.([]jsondoc.Value)
		if !ok {
			return c, fmt.Errorf("exit_codes is %s, not a list", kind(v))
		}
		c.exitCodes = list
	}
	command, err := commandArgs(cc)
	if err != nil {
		return c, err
	}
	switch c.Action {
	case "run":
		c.RunArgs, err = runArgs(cc)
		c.RunArgs = append(c.RunArgs, command...)
	case "exec":
		if len(command) == 0 {
			return c, fmt.Errorf("exec needs a command, the container first")
		}
		c.ExecArgs, c.Command = execArgs(cc), command
	default:
		return c, fmt.Errorf("action %q is neither run nor exec", c.Action)
	}
	return c, err
}

// runArgs are `docker run`'s options in the reference's order, then the
// image. Values print as Python's "%s" does (None, True).
func runArgs(cc *jsondoc.Object) ([]string, error) {
	var args []string
	if v, ok := cc.Get("detach"); !ok || jsondoc.PyTruthy(v) {
		args = append(args, "--detach=true")
	}
	if v, ok := cc.Get("env_file"); ok {
		if list, ok := v.([]jsondoc.Value); ok {
			args = appendEach(args, "--env-file=", list)
		} else {
			args = append(args, "--env-file="+jsondoc.PyStr(v))
		}
	}
	for _, key := range []string{"environment", "net", "pid", "privileged", "restart", "user", "volumes", "volumes_from"} {
		v, ok := cc.Get(key)
		if !ok {
			continue
		}
		switch key {
		case "environment", "volumes", "volumes_from":
			items, err := iterate(key, v)
			if err != nil {
				return nil, err
			}
			// docker and podman both spell it --volumes-from; the
			// reference's --volumes_from is refused (docs/compat.md).
			flag := map[string]string{"environment": "--env=", "volumes": "--volume=", "volumes_from": "--volumes-from="}[key]
			args = appendEach(args, flag, items)
		case "privileged":
			args = append(args, "--privileged="+strings.ToLower(jsondoc.PyStr(v)))
		default:
			args = append(args, "--"+key+"="+jsondoc.PyStr(v))
		}
	}
	image := ""
	if v, ok := cc.Get("image"); ok {
		image = jsondoc.PyStr(v)
	}
	return append(args, image), nil
}

// execArgs are `docker exec`'s options.
func execArgs(cc *jsondoc.Object) []string {
	var args []string
	if v, ok := cc.Get("privileged"); ok {
		args = append(args, "--privileged="+strings.ToLower(jsondoc.PyStr(v)))
	}
	if v, ok := cc.Get("user"); ok {
		args = append(args, "--user="+jsondoc.PyStr(v))
	}
	return args
}

// commandArgs is the command: none when false in Python's sense, a list
// as it is, text split on white space.
func commandArgs(cc *jsondoc.Object) ([]string, error) {
	v, _ := cc.Get("command")
	if !jsondoc.PyTruthy(v) {
		return nil, nil
	}
	switch x := v.(type) {
	case []jsondoc.Value:
		out := make([]string, len(x))
		for i, item := range x {
			out[i] = jsondoc.PyStr(item)
		}
		return out, nil
	case string:
		return strings.FieldsFunc(x, pystr.IsSpace), nil
	}
	return nil, fmt.Errorf("command is %s, not a list or text", kind(v))
}

// iterate is what the reference's `for v in value` went through: a
// list's items, an object's keys; text is one item (Python went through
// its characters).
func iterate(key string, v jsondoc.Value) ([]jsondoc.Value, error) {
	switch x := v.(type) {
	case []jsondoc.Value:
		return x, nil
	case *jsondoc.Object:
		return jsondoc.StringList(x.Keys()), nil
	case string:
		return []jsondoc.Value{x}, nil
	}
	return nil, fmt.Errorf("%s is %s, not a list", key, kind(v))
}

// appendEach adds flag+item for each item true in Python's sense.
func appendEach(args []string, flag string, items []jsondoc.Value) []string {
	for _, item := range items {
		if jsondoc.PyTruthy(item) {
			args = append(args, flag+jsondoc.PyStr(item))
		}
	}
	return args
}

// number is a JSON number or a boolean (a Python int) as a float.
func number(v jsondoc.Value) (float64, bool) {
	switch x := v.(type) {
	case jsondoc.Number:
		f, err := strconv.ParseFloat(x.Text, 64)
		return f, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// kind is jsondoc.KindOf in docker-cmd's words, where a string is "text".
func kind(v jsondoc.Value) string {
	if _, ok := v.(string); ok {
		return "text"
	}
	return jsondoc.KindOf(v)
}
