package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// substituter expands oslo.config's templates in string values: $name or
// ${name} is the value of option name (its own group first, then
// DEFAULT; "group.name" for another group), $$ or \$ is a dollar sign, and
// a dollar sign before anything else stays. A name that is no option is
// an error (the reference dies on it).
type substituter struct {
	set *Set
	raw map[string][]string
}

var template = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\$(?:(\$)|([_a-z][._a-z0-9]*)|\{([_a-z][._a-z0-9]*)\}|)`)
})

func (s *substituter) all(o *Option, vals []string, depth int) ([]string, error) {
	out := make([]string, len(vals))
	for i, v := range vals {
		var err error
		if out[i], err = s.one(o.groupName(), v, depth); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *substituter) one(group, v string, depth int) (string, error) {
	if depth > 10 {
		return "", errors.New("options refer to each other in a loop")
	}
	v = strings.ReplaceAll(v, `\$`, "$$")
	var firstErr error
	re := template()
	out := re.ReplaceAllStringFunc(v, func(m string) string {
		g := re.FindStringSubmatch(m)
		switch {
		case g[1] != "":
			return "$"
		case g[2] == "" && g[3] == "":
			return m // not a template: kept as is
		}
		name := g[2] + g[3]
		val, err := s.lookup(group, name, depth)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return val
	})
	return out, firstErr
}

// lookup is the text of option name as Python's str() shows its value.
func (s *substituter) lookup(group, name string, depth int) (string, error) {
	o := s.set.find(group, name)
	if o == nil && strings.Contains(name, ".") {
		g, n, _ := strings.Cut(name, ".")
		o = s.set.find(g, n)
	}
	if o == nil {
		o = s.set.find("DEFAULT", name)
	}
	if o == nil {
		return "", fmt.Errorf("no option %q to substitute for $%s (write $$ for a dollar sign)", name, name)
	}
	vals := s.raw[o.key()]
	switch {
	case vals == nil:
		return "", nil
	case o.kind() == multi:
		subbed, err := s.all(o, vals, depth+1)
		return jsondoc.PyRepr(jsondoc.StringList(subbed)), err
	case o.kind() == boolean:
		if b, err := strconv.ParseBool(strings.TrimSpace(vals[len(vals)-1])); err == nil && b {
			return "True", nil
		}
		return "False", nil
	case o.kind() == str:
		return s.one(o.groupName(), vals[len(vals)-1], depth+1)
	}
	return vals[len(vals)-1], nil
}
