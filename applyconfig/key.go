package applyconfig

import (
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"strings"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// --key and --boolean-key: one value of the metadata, printed or tested,
// and the types --key can check it against.

func printKey(stdout io.Writer, o options, log *slog.Logger) error {
	cfg, err := o.readMetadata()
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	v, ok := metadata.Lookup(cfg, o.key)
	if !ok {
		if o.hasKeyDefault {
			fmt.Fprintln(stdout, o.keyDefault)
			return nil
		}
		err := fmt.Errorf("key %s does not exist in %s", o.key, jsondoc.PyRepr(jsondoc.StringList(o.metadata)))
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	if err := checkType(jsondoc.PyStr(v), o.keyType); err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	switch v.(type) {
	case *jsondoc.Object, []jsondoc.Value, bool:
		fmt.Fprintln(stdout, jsondoc.Dumps(v))
	default:
		fmt.Fprintln(stdout, jsondoc.PyStr(v))
	}
	return nil
}

func booleanKey(o options, log *slog.Logger) error {
	cfg, err := o.readMetadata()
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	v, _ := metadata.Lookup(cfg, o.booleanKey)
	b, ok := v.(bool)
	switch {
	case !ok:
		return exitcode.With(exitcode.NotBoolean, nil)
	case !b:
		return exitcode.With(exitcode.Failure, nil)
	}
	return nil
}

// Python's re.match anchors at the start; its "$" also matches before a
// final newline, hence "\n?$" below. \d is any Unicode digit in Python.
// Only --type's pattern is compiled, when used: not every run of every
// program of the binary.
var keyTypes = map[string]string{
	"int":          `^[0-9]+\n?$`,
	"default":      `^[A-Za-z0-9_]*\n?$`,
	"netaddress":   `^[A-Za-z0-9/.:-]*\n?$`,
	"netdevice":    `^[A-Za-z0-9/.:-]*\n?$`,
	"dsn":          `^[a-zA-Z0-9]+://([a-zA-Z0-9+_-]+(:[^@]+)?)?(@?[a-zA-Z0-9/_.-]+)?(/[a-zA-Z0-9_-]+)?(\?[a-zA-Z0-9=_-]+)?\n?$`,
	"swiftdevices": `^(r\p{Nd}+z\p{Nd}+-[A-Za-z0-9.-_]+:%PORT%/[^,]+,?)+\n?$`,
	"username":     `^[A-Za-z0-9_-]+\n?$`,
	"raw":          ``,
}

func typeNames() []string {
	names := make([]string, 0, len(keyTypes))
	for n := range keyTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func checkType(value, typeName string) error {
	pattern, ok := keyTypes[typeName]
	if !ok {
		return fmt.Errorf("requested validation of unknown type: %s (valid types: %s)", typeName, strings.Join(typeNames(), ", "))
	}
	if !regexp.MustCompile(pattern).MatchString(value) {
		return fmt.Errorf("cannot interpret value '%s' as type %s", value, typeName)
	}
	return nil
}
