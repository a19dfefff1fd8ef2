// Package control reads os-apply-config's ".oac" control files: YAML
// mappings next to a template that set the mode, owner and group of the
// rendered file and whether an empty render is written. YAML is read with
// YAML 1.1 meaning, as the reference's PyYAML does: "mode: 0644" is octal,
// "yes"/"no"/"on"/"off" are booleans, "0o644" is a string.
package control

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os/user"
	"strconv"
	"strings"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pyyaml"
)

// Suffix ends the name of a control file; such files are never templates.
const Suffix = ".oac"

// Control is what a control file asks for. The zero Mode and negative
// Owner/Group mean "keep what the file has, or the default".
type Control struct {
	Mode       uint32
	Owner      int
	Group      int
	AllowEmpty bool
}

// Default is the control of a template without a control file.
func Default() Control { return Control{Owner: -1, Group: -1, AllowEmpty: true} }

// Accounts resolves owner and group names and ids. The default asks the
// system's user and group databases.
type Accounts interface {
	LookupUser(name string) (int, error)
	LookupUserID(id int) (int, error)
	LookupGroup(name string) (int, error)
	LookupGroupID(id int) (int, error)
}

// Error is a control file the reference would refuse; the message is the
// reference's, but for line breaks in the keys and values it quotes,
// which read "\n" and "\r": an error is one log line.
type Error struct{ Msg string }

func (e *Error) Error() string { return lineBreaks.Replace(e.Msg) }

var lineBreaks = strings.NewReplacer("\n", `\n`, "\r", `\r`)

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// parseYAML11 is the file's YAML as the reference reads it,
// "safe_load(...) or {}": nil when empty or false.
func parseYAML11(data []byte) (jsondoc.Value, error) {
	v, err := pyyaml.SafeLoad(data)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	if !jsondoc.PyTruthy(v) {
		return nil, nil
	}
	return v, nil
}

// Parse reads a control file's text. An empty or comment-only file is the
// default control.
func Parse(data []byte, accounts Accounts) (Control, error) {
	c := Default()
	doc, err := parseYAML11(data)
	if err != nil {
		return c, err
	}
	if doc == nil {
		return c, nil
	}
	obj, ok := doc.(*jsondoc.Object)
	if !ok {
		return c, &Error{Msg: "header is not a dict"}
	}
	if obj.Len() == 0 {
		return c, nil
	}
	// Keys apply in document order, so the first bad key is the one named,
	// as in the reference.
	for _, k := range obj.Keys() {
		v, _ := obj.Get(k)
		var err error
		switch k {
		case "mode":
			c.Mode, err = parseMode(v)
		case "owner":
			c.Owner, err = resolve(v, "owner", "passwd", accounts.LookupUser, accounts.LookupUserID)
		case "group":
			c.Group, err = resolve(v, "group", "group", accounts.LookupGroup, accounts.LookupGroupID)
		case "allow_empty":
			b, ok := v.(bool)
			if !ok {
				err = errorf("allow_empty requires Boolean, got: '%s'", jsondoc.PyStr(v))
			}
			c.AllowEmpty = b
		default:
			err = errorf("unrecognised file control key '%s'", k)
		}
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

func parseMode(v jsondoc.Value) (uint32, error) {
	n, ok := v.(jsondoc.Number)
	if !ok || n.IsFloat {
		return 0, errorf("mode '%s' is not numeric", jsondoc.PyStr(v))
	}
	m, err := strconv.ParseInt(n.Text, 10, 64)
	if err != nil || m < 0 || m > 0o777 {
		return 0, errorf("mode '%s' out of range", octalRepr(n.Text))
	}
	return uint32(m), nil
}

// octalRepr prints a decimal integer, of any size, as Python's "%#o"
// does: 0o1204, -0o5.
func octalRepr(dec string) string {
	i, ok := new(big.Int).SetString(dec, 10)
	if !ok {
		return dec
	}
	if i.Sign() < 0 {
		return "-0o" + new(big.Int).Neg(i).Text(8)
	}
	return "0o" + i.Text(8)
}

func resolve(v jsondoc.Value, what, db string, byName func(string) (int, error), byID func(int) (int, error)) (int, error) {
	var id int
	var err error
	switch x := v.(type) {
	case string:
		id, err = byName(x)
	case jsondoc.Number:
		i, perr := strconv.ParseInt(x.Text, 10, 64)
		if x.IsFloat || perr != nil || i < math.MinInt32 || i > math.MaxUint32 {
			if x.IsFloat {
				return 0, errorf("%s '%s' must be a string or int", what, jsondoc.PyStr(v))
			}
			return 0, errorf("%s '%s' not found in %s database", what, jsondoc.PyStr(v), db)
		}
		id, err = byID(int(i))
	default:
		return 0, errorf("%s '%s' must be a string or int", what, jsondoc.PyStr(v))
	}
	if err != nil {
		return 0, errorf("%s '%s' not found in %s database", what, jsondoc.PyStr(v), db)
	}
	return id, nil
}

// SystemAccounts asks the system's user and group databases (NSS when
// built with cgo).
type SystemAccounts struct{}

func (SystemAccounts) LookupUser(name string) (int, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(u.Uid)
}

func (SystemAccounts) LookupUserID(id int) (int, error) {
	if id < 0 {
		return 0, errors.New("negative uid")
	}
	u, err := user.LookupId(strconv.Itoa(id))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(u.Uid)
}

func (SystemAccounts) LookupGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(g.Gid)
}

func (SystemAccounts) LookupGroupID(id int) (int, error) {
	if id < 0 {
		return 0, errors.New("negative gid")
	}
	g, err := user.LookupGroupId(strconv.Itoa(id))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(g.Gid)
}
