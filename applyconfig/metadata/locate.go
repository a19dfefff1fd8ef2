package metadata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// The places os-apply-config looks for its metadata when no --metadata
// is given, for the programs that read its data in-process rather than
// through `os-apply-config --key` (the configure.d steps of nodeconfig).
const (
	OSConfigFilesList    = "/var/lib/os-collect-config/os_config_files.json"
	oldOSConfigFilesList = "/var/run/os-collect-config/os_config_files.json"
)

// FallbackFiles are merged under the listed files, as os-apply-config's
// default --fallback-metadata.
var FallbackFiles = []string{
	"/var/cache/heat-cfntools/last_metadata",
	"/var/lib/heat-cfntools/cfn-init-data",
	"/var/lib/cloud/data/cfn-init-data",
}

// Files are the files `os-apply-config --key` would merge, in order:
// the fallbacks, then $OS_CONFIG_FILES (split on ":", even when empty),
// else the list in $OS_CONFIG_FILES_PATH or os-collect-config's default
// list, else (the default list being empty) the list at its old place.
// root prefixes the built-in paths ("" in production).
func Files(lookupEnv func(string) (string, bool), root string) ([]string, error) {
	out := make([]string, 0, len(FallbackFiles)+2)
	for _, f := range FallbackFiles {
		out = append(out, root+f)
	}
	if v, ok := lookupEnv("OS_CONFIG_FILES"); ok {
		return append(out, strings.Split(v, ":")...), nil
	}
	listPath, custom := lookupEnv("OS_CONFIG_FILES_PATH")
	if !custom {
		listPath = root + OSConfigFilesList
	}
	list, err := readList(listPath)
	if err == nil && len(list) == 0 && !custom {
		list, err = readList(root + oldOSConfigFilesList)
	}
	return append(out, list...), err
}

// readList reads a JSON list of file names; a missing file is empty.
func readList(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("Could not read %s: %v", path, err)}
	}
	doc, err := jsondoc.Loads(data)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("Could not parse %s: %v", path, err)}
	}
	items, ok := doc.([]jsondoc.Value)
	if !ok {
		return nil, &Error{Msg: "No list defined in json file: " + path}
	}
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// Raw is what `os-apply-config --key KEY --type raw --key-default ”`
// prints of v, the value Lookup found (nil when it found none), before
// its newline: "" for none, JSON for objects, lists and booleans, and
// Python's str() for strings and numbers.
func Raw(v jsondoc.Value) string {
	switch v.(type) {
	case nil:
		return ""
	case *jsondoc.Object, []jsondoc.Value, bool:
		return jsondoc.Dumps(v)
	}
	return jsondoc.PyStr(v)
}
