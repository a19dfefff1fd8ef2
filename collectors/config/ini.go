package config

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// parseINI reads oslo.config's INI dialect: [section] headers, "key =
// value" or "key: value", continuation lines indented, comments starting
// with # or ;, matching quotes around a value removed.
func parseINI(path string, data []byte, emit func(section, key, value string)) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	section, key, value := "", "", ""
	inValue := false
	flush := func() {
		if inValue {
			emit(section, key, unquote(value))
			inValue = false
		}
	}
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';':
			continue
		case line[0] == ' ' || line[0] == '\t':
			if !inValue {
				return fmt.Errorf("%s:%d: unexpected continuation line", path, n)
			}
			value += "\n" + trimmed
			continue
		}
		flush()
		if strings.HasPrefix(trimmed, "[") {
			if !strings.HasSuffix(trimmed, "]") || len(trimmed) < 3 {
				return fmt.Errorf("%s:%d: invalid section header %q", path, n, trimmed)
			}
			section = strings.TrimSpace(trimmed[1 : len(trimmed)-1])
			continue
		}
		i := strings.IndexAny(trimmed, ":=")
		if i <= 0 {
			return fmt.Errorf("%s:%d: expected \"key = value\", got %q", path, n, trimmed)
		}
		if section == "" {
			return fmt.Errorf("%s:%d: option %q before any [section]", path, n, strings.TrimSpace(trimmed[:i]))
		}
		key, value, inValue = strings.TrimSpace(trimmed[:i]), strings.TrimSpace(trimmed[i+1:]), true
	}
	flush()
	return sc.Err()
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == v[len(v)-1] && (v[0] == '"' || v[0] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// normalizeSection is oslo.config's: DEFAULT stays, others are lower case.
func normalizeSection(s string) string {
	if s == "DEFAULT" {
		return s
	}
	return strings.ToLower(s)
}
