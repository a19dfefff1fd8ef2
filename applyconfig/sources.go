package applyconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Where the metadata comes from: --metadata, $OS_CONFIG_FILES, or the list
// os-collect-config writes, and the fallback files merged first.

// chooseMetadata picks the metadata files: --metadata, else
// $OS_CONFIG_FILES (even empty), else the list in --os-config-files, else
// (for the default list only) the list at its old location.
func (o *options) chooseMetadata(env Env, log *slog.Logger) error {
	if len(o.metadata) > 0 {
		return nil
	}
	if v, ok := env.LookupEnv("OS_CONFIG_FILES"); ok {
		o.metadata = strings.Split(v, ":")
		return nil
	}
	list, err := loadList(o.osConfigFiles)
	if err != nil {
		return err
	}
	if len(list) == 0 && o.osConfigFiles == env.defaultOSConfigFiles() {
		old := env.rooted(oldOSConfigFiles)[0]
		log.Warn("DEPRECATED: falling back to " + old)
		if list, err = loadList(old); err != nil {
			return err
		}
	}
	o.metadata = list
	return nil
}

// loadList reads a JSON list of file names; a missing file is an empty list.
func loadList(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("Could not read %s: %w", path, err)
	}
	doc, err := jsondoc.Loads(data)
	if err != nil {
		return nil, fmt.Errorf("Could not parse %s: %w", path, err)
	}
	items, ok := doc.([]jsondoc.Value)
	if !ok {
		return nil, fmt.Errorf("No list defined in json file: %s", path)
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func (o *options) readMetadata() (*jsondoc.Object, error) {
	return metadata.Read(append(append([]string(nil), o.fallback...), o.metadata...))
}
