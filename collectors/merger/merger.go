// Package merger explodes the software deployments found in collected
// metadata into cache keys of their own, as os-collect-config's merger
// does: the collector's whole document comes first, then, for
// each deployment key present, every deployment of group os-apply-config
// or Heat::Ungrouped as (name, config).
package merger

import (
	"fmt"
	"log/slog"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/deployment"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Explode returns the entries for a collector's document. The reference's
// warnings keep their words; a deployment that is not an object or has no
// "config" is skipped with a warning (the reference crashed).
func Explode(collector string, doc jsondoc.Value, deploymentKeys []string, log *slog.Logger) []collectors.Entry {
	out := []collectors.Entry{{Name: collector, Content: doc}}
	obj, ok := doc.(*jsondoc.Object)
	if !ok {
		return out
	}
	for _, key := range deploymentKeys {
		v, present := obj.Get(key)
		if !present {
			continue
		}
		deployments, ok := v.([]jsondoc.Value)
		if !ok {
			log.Warn(fmt.Sprintf("Deployment-key %s was found but does not contain a list.", key))
			continue
		}
		log.Debug("Deployment found for " + key)
		for i, item := range deployments {
			d, ok := item.(*jsondoc.Object)
			if !ok {
				log.Warn(fmt.Sprintf("Deployment %d under %s is not an object; skipped.", i, key))
				continue
			}
			name, ok := d.Get("name")
			if !ok {
				log.Warn(fmt.Sprintf("No name found for a deployment under %s.", key))
				continue
			}
			group := deployment.Ungrouped
			if g, ok := d.Get("group"); ok {
				group = jsondoc.PyStr(g)
			}
			if !deployment.ForApplyConfig(group) {
				continue
			}
			config, ok := d.Get("config")
			if !ok {
				log.Warn(fmt.Sprintf("Deployment %s under %s has no config; skipped.", jsondoc.PyStr(name), key))
				continue
			}
			out = append(out, collectors.Entry{Name: jsondoc.PyStr(name), Content: config})
		}
	}
	return out
}
