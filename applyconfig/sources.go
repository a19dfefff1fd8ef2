package applyconfig

import (
	"log/slog"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Where the metadata comes from: --metadata, $OS_CONFIG_FILES, or the list
// os-collect-config writes, and the fallback files merged first.

// chooseMetadata picks the metadata files: --metadata, else what
// metadata.Listed finds from the list in --os-config-files.
func (o *options) chooseMetadata(env Env, log *slog.Logger) error {
	if len(o.metadata) > 0 {
		return nil
	}
	list, err := metadata.Listed(env.LookupEnv, env.Root, o.osConfigFiles, func(old string) {
		log.Warn("DEPRECATED: falling back to " + old)
	})
	o.metadata = list
	return err
}

func (o *options) readMetadata() (*jsondoc.Object, error) {
	return metadata.Read(append(append([]string(nil), o.fallback...), o.metadata...))
}
