package netconfig

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pyyaml"
)

// Key is the metadata key of the network's configuration, os-net-config's
// own format: an object, or a string holding one in JSON or YAML.
const Key = "os_net_config"

// networkConfig is the member os-net-config reads: the list of
// interfaces, bridges, bonds... to configure.
const networkConfig = "network_config"

// checkConfig tells whether the metadata asks for a network
// configuration (set), and refuses one that os-net-config could not
// read: everything is checked here, before anything runs, because
// os-net-config's failure would throw the node's network away for the
// safe defaults (DHCP on every interface, with --cleanup).
//
// Absent, null or a string of nothing but line breaks is no
// configuration (the reference's `[ -n "$NET_CONFIG" ]`). The element's
// template renders an object as its JSON and a string as it is, so
// os-net-config reads what yaml.safe_load makes of either; it wants an
// object whose network_config is a list. Anything else (a number, a
// boolean, a list, a string that is not such an object, or an empty
// object, which the template renders as an empty file) fails it.
func checkConfig(v jsondoc.Value, found bool) (set bool, err error) {
	if !found {
		return false, nil
	}
	obj, ok := v.(*jsondoc.Object)
	if s, isString := v.(string); isString {
		if strings.TrimRight(s, "\n") == "" {
			return false, nil
		}
		loaded, err := pyyaml.SafeLoad([]byte(s))
		if err != nil {
			return false, fmt.Errorf("%s is a string that is not JSON or YAML: %v", Key, err)
		}
		if obj, ok = loaded.(*jsondoc.Object); !ok {
			return false, fmt.Errorf("%s is a string holding %s, not an object", Key, jsondoc.KindOf(loaded))
		}
	} else if !ok {
		return false, fmt.Errorf("%s is %s, not an object (nor a string holding one)", Key, jsondoc.KindOf(v))
	}
	list, found := obj.Get(networkConfig)
	if !found {
		return false, fmt.Errorf("%s has no %s list: os-net-config would refuse it", Key, networkConfig)
	}
	if _, ok := jsondoc.Materialized(list).([]jsondoc.Value); !ok {
		return false, fmt.Errorf("%s.%s is %s, not a list: os-net-config would refuse it", Key, networkConfig, jsondoc.KindOf(list))
	}
	return true, nil
}

// checkURLs refuses a Heat endpoint the metadata server's ping would
// read that does not give a host: the keys are read in order, as the
// ping reads them, skipping those absent, null or empty, up to the first
// set one, which must be an http:// or https:// URL with a host (the
// keys after it are never read).
func checkURLs(cfg *jsondoc.Object) error {
	for _, key := range urlKeys {
		v, found := metadata.Lookup(cfg, key)
		if !found {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s is %s, not a URL", key, jsondoc.KindOf(v))
		}
		if strings.TrimRight(s, "\n") == "" {
			continue
		}
		if !isHostURL(s) {
			// The value is not printed: a metadata_url may be a
			// pre-signed URL.
			return fmt.Errorf("%s is not an http:// or https:// URL with a host", key)
		}
		return nil
	}
	return nil
}

// isHostURL tells whether s is one URL naming a host, which the ping's
// host is taken from (metadataServer): an http or https scheme spelt in
// lower case (the reference's sed looks for "http"), a host, no white
// space or control character.
func isHostURL(s string) bool {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return false
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Hostname() != ""
}
