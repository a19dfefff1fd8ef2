// Package deployment is the software deployment document that Heat puts in
// a server's `deployments` metadata, that heat-config saves and hands to a
// hook on stdin, and that heat-config-notify reads its signal credentials
// from. A Deployment keeps the JSON object whole, in its key order and with
// its numbers' digits, because what a hook gets and what is saved must be
// what came (Python's json round trip); the accessors only read it.
package deployment

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// The group names every stage knows: Ungrouped is the group of a
// SoftwareConfig whose template set none; ApplyConfig's config
// os-collect-config merges into os-apply-config's data, so no hook runs
// it and 99-refresh-completed signals it.
const (
	Ungrouped   = "Heat::Ungrouped"
	ApplyConfig = "os-apply-config"
)

// ForApplyConfig tells whether os-apply-config, not a hook, takes the
// config of a deployment of this group: os-collect-config's merger
// explodes these into keys, and heat-config-rebuild never marks them.
func ForApplyConfig(group string) bool { return group == ApplyConfig || group == Ungrouped }

// Deployment is one entry of the deployments list.
type Deployment struct {
	obj *jsondoc.Object
}

// Input is one entry of a deployment's inputs.
type Input struct {
	Name string
	// Type is the input's declared type ("" when absent).
	Type string
	// Value is nil for JSON null, and when HasValue is false.
	Value    jsondoc.Value
	HasValue bool
}

// Output is one declared output.
type Output struct {
	Name, Type  string
	ErrorOutput bool
}

// ErrInvalid marks a document that is not a usable deployment: the
// message says what is wrong with it.
var ErrInvalid = errors.New("invalid deployment")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// FromValue checks that v is a deployment heat-config can run: an object
// with a safe string id, a string group and a list of inputs, each an
// object with a string name. The error names what is wrong, not where the
// document came from: callers add that.
func FromValue(v jsondoc.Value) (*Deployment, error) { return fromValue(v, true) }

// FromValueWithoutID is FromValue for a document that may have no id (ID
// is then ""): what a hook whose reference never reads the id accepts,
// as heat-agents' own tests feed some of them. An id present is checked.
func FromValueWithoutID(v jsondoc.Value) (*Deployment, error) { return fromValue(v, false) }

func fromValue(v jsondoc.Value, needID bool) (*Deployment, error) {
	obj, ok := v.(*jsondoc.Object)
	if !ok {
		return nil, invalid("not a JSON object but %s", jsondoc.KindOf(v))
	}
	if id, ok := obj.Get("id"); ok {
		ids, ok := id.(string)
		if !ok {
			return nil, invalid("id is %s, not a string", jsondoc.KindOf(id))
		}
		if err := CheckID(ids); err != nil {
			return nil, err
		}
	} else if needID {
		return nil, invalid("no id")
	}
	if g, ok := obj.Get("group"); !ok {
		return nil, invalid("no group")
	} else if _, ok := g.(string); !ok {
		return nil, invalid("group is %s, not a string", jsondoc.KindOf(g))
	}
	in, ok := obj.Get("inputs")
	if !ok {
		return nil, invalid("no inputs")
	}
	list, ok := in.([]jsondoc.Value)
	if !ok {
		return nil, invalid("inputs is %s, not a list", jsondoc.KindOf(in))
	}
	for i, item := range list {
		o, ok := item.(*jsondoc.Object)
		if !ok {
			return nil, invalid("input %d is %s, not an object", i, jsondoc.KindOf(item))
		}
		if n, ok := o.Get("name"); !ok {
			return nil, invalid("input %d has no name", i)
		} else if _, ok := n.(string); !ok {
			return nil, invalid("input %d has a name that is %s, not a string", i, jsondoc.KindOf(n))
		}
	}
	return &Deployment{obj: obj}, nil
}

// Parse reads one deployment from JSON.
func Parse(data []byte) (*Deployment, error) {
	v, err := jsondoc.Loads(data)
	if err != nil {
		return nil, invalid("%s", jsondoc.PythonError(err))
	}
	return FromValue(v)
}

// Load reads a deployment file (a state file of heat-config); the error
// names the file.
func Load(path string) (*Deployment, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// The file's bytes are the document's: a config is decoded only if
	// something looks at it (Config), so a 100 MB one costs its bytes.
	v, err := jsondoc.LoadsOwnedLazy(data, "config", 0)
	var d *Deployment
	if err != nil {
		err = invalid("%s", jsondoc.PythonError(err))
	} else {
		d, err = FromValue(v)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// The deployments list file, which os-apply-config renders from the
// metadata and 55-heat-config and the hooks' configure.d scripts read,
// and the variable that overrides it.
const (
	ListVar         = "HEAT_SHELL_CONFIG"
	DefaultListFile = "/var/run/heat-config/heat-config"
)

// List reads the deployments list (heat-config's input file): a JSON list
// whose items are left undecoded into Deployments, so that one bad item
// does not stop the others.
func List(data []byte) ([]jsondoc.Value, error) {
	v, err := jsondoc.Loads(data)
	if err != nil {
		return nil, invalid("%s", jsondoc.PythonError(err))
	}
	list, ok := v.([]jsondoc.Value)
	if !ok {
		return nil, invalid("the deployments are %s, not a list", jsondoc.KindOf(v))
	}
	return list, nil
}

// ListOwned is List for a caller that hands data over (it must never be
// modified afterwards): the items' strings share its bytes, and their
// configs stay undecoded until something looks (Config), so a 100 MB
// config costs its bytes, not a tree 1.2 times their size too.
func ListOwned(data []byte) ([]jsondoc.Value, error) {
	v, err := jsondoc.LoadsOwnedLazy(data, "config", 1)
	if err != nil {
		return nil, invalid("%s", jsondoc.PythonError(err))
	}
	list, ok := v.([]jsondoc.Value)
	if !ok {
		return nil, invalid("the deployments are %s, not a list", jsondoc.KindOf(v))
	}
	return list, nil
}

// MaxIDBytes bounds an id. Heat's are 36-byte UUIDs; the longest file
// named after one, the signal record's temporary file, is 24 bytes
// longer, and a file name is at most 255 bytes (NAME_MAX).
const MaxIDBytes = 200

// CheckID refuses ids that could name a file outside the directory they
// are joined to: empty, ".", "..", or with "/" or NUL; ids too long for
// the files named after them (the reference ran the hook, then crashed
// on <id>.notify.json, so the deployment was never signalled; ours left
// its signal record unwritten); and ids with a control character, which
// would split the log lines that name their files.
func CheckID(id string) error {
	switch {
	case id == "":
		return invalid("empty id")
	case id == "." || id == "..":
		return invalid("id %q is not a file name", id)
	case strings.ContainsAny(id, "/\x00"):
		return invalid("id %q holds a slash or NUL", id)
	case len(id) > MaxIDBytes:
		return invalid("id %q is longer than %d bytes", id, MaxIDBytes)
	case strings.IndexFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return invalid("id %q holds a control character", id)
	}
	return nil
}

// Label names a deployment in messages: its id, and its name when it has
// one. It works on documents FromValue refused too.
func Label(v jsondoc.Value) string {
	obj, _ := v.(*jsondoc.Object)
	id, _ := str(obj, "id")
	name, _ := str(obj, "name")
	switch {
	case id != "" && name != "":
		return fmt.Sprintf("%q (%s)", name, jsondoc.PyReprString(id))
	case id != "":
		return jsondoc.PyReprString(id)
	case name != "":
		return fmt.Sprintf("%q", name)
	}
	return "without id or name"
}

func str(obj *jsondoc.Object, key string) (string, bool) {
	v, ok := obj.Get(key)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}
