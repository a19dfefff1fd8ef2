package metadata

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Where the metadata lives when no --metadata is given, for os-apply-config
// and for the node steps that read its data in-process rather than
// through `os-apply-config --key` (nodeconfig): the variables that name
// it, os-collect-config's list of the files of its last pass, that list's
// legacy place (in the cache's default directories, collectors/cache), and
// the files merged under them. Every path is the reference's, under a
// root ("" in production; tests give a scratch tree).
const (
	// FilesVar names the metadata files, colon separated.
	FilesVar = "OS_CONFIG_FILES"
	// ListPathVar replaces OSConfigFilesList.
	ListPathVar = "OS_CONFIG_FILES_PATH"

	OSConfigFilesList    = cache.DefaultDir + "/" + cache.MetaListFile
	oldOSConfigFilesList = cache.DefaultBackupDir + "/" + cache.MetaListFile
)

// FallbackFiles are merged under the listed files, as os-apply-config's
// default --fallback-metadata.
var FallbackFiles = []string{
	"/var/cache/heat-cfntools/last_metadata",
	"/var/lib/heat-cfntools/cfn-init-data",
	"/var/lib/cloud/data/cfn-init-data",
}

// Files are the files `os-apply-config --key` would merge, in order:
// the fallbacks, then what Listed finds from the default list.
func Files(lookupEnv func(string) (string, bool), root string) ([]string, error) {
	list, err := Listed(lookupEnv, root, ListPath(lookupEnv, root), nil)
	return append(Fallbacks(root), list...), err
}

// Fallbacks are FallbackFiles under root.
func Fallbacks(root string) []string {
	out := make([]string, 0, len(FallbackFiles)+2)
	for _, f := range FallbackFiles {
		out = append(out, root+f)
	}
	return out
}

// ListPath is the list read by default: $OS_CONFIG_FILES_PATH, else
// OSConfigFilesList under root.
func ListPath(lookupEnv func(string) (string, bool), root string) string {
	if v, ok := lookupEnv(ListPathVar); ok {
		return v
	}
	return root + OSConfigFilesList
}

// Listed are the metadata files when --metadata names none:
// $OS_CONFIG_FILES (split on ":", even when empty), else the list at
// listPath, else, when listPath is the default (ListPath, so also
// $OS_CONFIG_FILES_PATH) and its list is empty or missing, the list at
// the legacy place, after deprecated(its path) when deprecated is not
// nil. This is the reference's order (apply_config.main).
func Listed(lookupEnv func(string) (string, bool), root, listPath string, deprecated func(old string)) ([]string, error) {
	if v, ok := lookupEnv(FilesVar); ok {
		return strings.Split(v, ":"), nil
	}
	list, err := ReadList(listPath)
	if err != nil || len(list) > 0 || listPath != ListPath(lookupEnv, root) {
		return list, err
	}
	old := root + oldOSConfigFilesList
	if deprecated != nil {
		deprecated(old)
	}
	return ReadList(old)
}

// ReadList reads a JSON list of file names, keeping its strings; a
// missing file is an empty list.
func ReadList(path string) ([]string, error) {
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
	out := make([]string, 0, len(items))
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
