package config

import (
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/internal/pystr"
	"github.com/tripleo-go/agent/internal/pyutf8"
)

// parseINI reads oslo.config's INI dialect as its parser does
// (oslo_config.iniparser, on a file opened as UTF-8 text): [section]
// headers, "key = value" or "key: value", comments starting with # or ;,
// continuation lines indented with a space or a tab (even one that looks
// like a comment), a blank line ending a value, matching quotes around
// the value's first line removed. Line breaks are "\n", "\r\n" or "\r",
// white space is Python's.
func parseINI(path string, data []byte, emit func(section, key, value string)) error {
	if msg, bad := pyutf8.DecodeError(data); bad {
		return fmt.Errorf("%s: not UTF-8: %s", path, msg)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	text = strings.TrimSuffix(text, "\n")
	section, haveSection := "", false
	var key string
	var value []string
	keyLine := 0 // the line of the pending assignment, 0 for none
	flush := func() error {
		if keyLine == 0 {
			return nil
		}
		if !haveSection {
			return fmt.Errorf("%s:%d: option %q before any [section]", path, keyLine, key)
		}
		emit(section, key, strings.Join(value, "\n"))
		keyLine = 0
		return nil
	}
	if text == "" {
		return nil
	}
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		line := strings.TrimRightFunc(raw, pystr.IsSpace)
		switch {
		case line == "":
			// A blank line ends a value.
			if err := flush(); err != nil {
				return err
			}
			continue
		case line[0] == ' ' || line[0] == '\t':
			if keyLine == 0 {
				return fmt.Errorf("%s:%d: unexpected continuation line", path, n)
			}
			value = append(value, strings.TrimLeftFunc(line, pystr.IsSpace))
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		switch line[0] {
		case '[':
			if !strings.HasSuffix(line, "]") || len(line) <= 2 {
				return fmt.Errorf("%s:%d: invalid section header %q", path, n, line)
			}
			section, haveSection = line[1:len(line)-1], true
		case '#', ';':
		default:
			k, v, ok := splitKeyValue(line)
			if !ok || k == "" {
				return fmt.Errorf("%s:%d: expected \"key = value\", got %q", path, n, line)
			}
			key, value, keyLine = k, []string{v}, n
		}
	}
	return flush()
}

// splitKeyValue splits at the first ":" or "=", trims both sides and
// removes matching quotes around the value (a lone quote is an empty
// value, as in oslo.config).
func splitKeyValue(line string) (key, value string, ok bool) {
	i := strings.IndexAny(line, ":=")
	if i < 0 {
		return "", "", false
	}
	key = strings.TrimFunc(line[:i], pystr.IsSpace)
	value = strings.TrimFunc(line[i+1:], pystr.IsSpace)
	if value != "" && value[0] == value[len(value)-1] && (value[0] == '"' || value[0] == '\'') {
		value = value[1:max(len(value)-1, 1)]
	}
	return key, value, true
}

// normalizeSection is oslo.config's: DEFAULT stays, others are lower case.
func normalizeSection(s string) string {
	if s == "DEFAULT" {
		return s
	}
	return strings.ToLower(s)
}
