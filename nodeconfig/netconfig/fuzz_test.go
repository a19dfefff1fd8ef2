package netconfig

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pyyaml"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// netInput is one fuzz input: the JSON of os_net_config's value and of
// one Heat endpoint's (urlKeys[key]), and which exit status the fake
// os-net-config gives (onc).
type netInput struct {
	config, url string
	key, onc    uint8
}

const goodConfig = `{"network_config": [{"type": "interface", "name": "eth0", "use_dhcp": true}]}`

var netSeeds = []netInput{
	{goodConfig, `"http://192.0.2.1:8000/v1/"`, 0, 1},
	{goodConfig, `"http://192.0.2.1:8000/v1/"`, 0, 2},
	{goodConfig, `"https://[fd00::1]:13000/v3"`, 1, 1},
	{goodConfig, `"https://undercloud/v3"`, 1, 1},
	{goodConfig, `""`, 2, 1},
	{goodConfig, `"\n"`, 3, 1},
	{goodConfig, `null`, 0, 1},
	{goodConfig, `7`, 1, 1},
	{goodConfig, `{"auth_url": "http://192.0.2.1:5000"}`, 1, 1},
	{goodConfig, `"http://:8000/v1/"`, 0, 1},
	{goodConfig, `"undercloud.example.com"`, 2, 1},
	{goodConfig, `"HTTP://192.0.2.1:8000/"`, 0, 1},
	{goodConfig, `"http://192.0.2.1:8000/ x"`, 0, 1},
	{goodConfig, `"  "`, 3, 1},
	{goodConfig, `"http://192.0.2.1:8000/v1/"`, 0, 0},
	{goodConfig, `"http://192.0.2.1:8000/v1/"`, 0, 3},
	{`{"network_config": []}`, `"http://192.0.2.1:8000/"`, 0, 1},
	{`"network_config:\n  - type: interface\n    name: eth0\n"`, `"http://192.0.2.1:8000/"`, 0, 1},
	{`"{\"network_config\": []}"`, `"http://192.0.2.1:8000/"`, 0, 1},
	{`3`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`false`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`true`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`[{"type": "interface", "name": "eth0"}]`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`"eth0"`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`"network_config: ["`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`"  "`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`{}`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`{"network_config": {"type": "interface"}}`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`{"interfaces": []}`, `"http://192.0.2.1:8000/"`, 0, 2},
	{`null`, `7`, 0, 2},
	{`""`, `7`, 0, 2},
	{`"\n\n"`, `7`, 0, 2},
	{`{"network_config": [], "x": 1e400, "y": "caf\u00e9 <&> {{z}}"}`, `"http://192.0.2.1:8000/"`, 0, 1},
}

// oncStatuses are the fake os-net-config's exit statuses a fuzz input
// picks from: unchanged, changed, and two failures. The safe defaults'
// run, if any, exits 0.
var oncStatuses = []int{0, 2, 1, 6}

// FuzzNetConfig runs 20-os-net-config on metadata with a fuzzed
// os_net_config and a fuzzed Heat endpoint, with recording fakes of
// os-net-config, ip and ping. Absent, null or empty configuration does
// nothing. A configuration os-net-config could not read from the file
// the element's template renders (rendered here by our os-apply-config),
// or an endpoint that is not an http(s) URL with a host, is one line
// naming its key, exit 1, no command run and nothing under the root
// touched. Anything else runs os-net-config on the rendered file, pings
// the endpoint URL's host when the network changed, and falls back to the safe defaults only when os-net-config
// failed. With FUZZ_REFERENCE=1 (and TRIPLEO_IMAGE_ELEMENTS, as root)
// each input the step takes is also run by the reference's script and
// must give its outcome (TestReference's comparison), but where the
// reference's sed took another host to ping (docs/compat.md).
func FuzzNetConfig(f *testing.F) {
	for _, s := range netSeeds {
		f.Add(s.config, s.url, s.key, s.onc)
	}
	var ref string
	if os.Getenv("FUZZ_REFERENCE") == "1" {
		var why string
		if ref, why = referenceElements(); ref == "" {
			f.Skip(why)
		}
	}
	f.Fuzz(func(t *testing.T, config, urlValue string, key, onc uint8) {
		checkNetConfig(t, ref, netInput{config, urlValue, key, onc})
	})
}

// TestNetConfigSeedsAgainstReference runs the reference's script on the
// seeds and the kept inputs of FuzzNetConfig (with FUZZ_GENERATED=1,
// also those the fuzzer kept in the build cache) and compares.
func TestNetConfigSeedsAgainstReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference (a second an input)")
	}
	ref, why := referenceElements()
	if ref == "" {
		t.Skip(why)
	}
	inputs := append([]netInput(nil), netSeeds...)
	for _, vals := range difftest.FuzzCorpus(t, "FuzzNetConfig") {
		inputs = append(inputs, netInput{vals[0].(string), vals[1].(string), vals[2].(uint8), vals[3].(uint8)})
	}
	for i, in := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkNetConfig(t, ref, in) })
	}
	t.Logf("%d inputs compared", len(inputs))
}

// checkNetConfig lays the input out as a case, runs ours on it and
// checks the properties; with ref, an input we take is compared with the
// reference's run.
func checkNetConfig(t *testing.T, ref string, in netInput) {
	urlKey := urlKeys[int(in.key)%len(urlKeys)]
	path := strings.Split(urlKey, ".")
	md := fmt.Sprintf(`{"os_net_config": %s, %q: {%q: {%q: %s}}}`, in.config, path[0], path[1], path[2], in.url)
	v, err := jsondoc.Loads([]byte(md))
	doc, ok := v.(*jsondoc.Object)
	if err != nil || !ok {
		return // not metadata
	}
	status := oncStatuses[int(in.onc)%len(oncStatuses)]
	dir, ok := layCase(t, md, fmt.Sprintf("FAKE_ONC_STATUS=%d 0\n", status))
	if !ok {
		return // 20-os-apply-config fails first: the step never runs
	}
	rendered, _ := os.ReadFile(filepath.Join(dir, "before", ElementConfig))
	got, touched := runWatched(t, dir)
	unchanged := func() {
		t.Helper()
		if got.log != "" {
			t.Fatalf("commands were run:\n%s", got.log)
		}
		if diff := touched(); diff != "" {
			t.Fatalf("the root changed:\n%s", diff)
		}
	}
	refused := func(key string) {
		t.Helper()
		if exitcode.Of(got.err) != exitcode.Failure || got.stdout != "" ||
			!regexp.MustCompile(`^`+Name+`: `+regexp.QuoteMeta(key)+`[ .]`).MatchString(got.stderr) || strings.Count(got.stderr, "\n") != 1 {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want one line naming %s", md, exitcode.Of(got.err), got.stdout, got.stderr, key)
		}
		unchanged()
	}

	cfg, found := metadata.Lookup(doc, Key)
	if s, isString := cfg.(string); !found || isString && strings.TrimRight(s, "\n") == "" {
		if got.err != nil || got.stdout != "" || got.stderr != "" {
			t.Fatalf("%s: no configuration: exit %d, stdout %q, stderr %q", md, exitcode.Of(got.err), got.stdout, got.stderr)
		}
		unchanged()
		return
	}
	if !readable(cfg, rendered) {
		refused(Key)
		return
	}
	host, sedHost, badKey := pingHost(doc)
	if badKey != "" {
		refused(badKey)
		return
	}
	first := "os-net-config -c /etc/os-net-config/element_config.json -v --detailed-exit-codes\n--- /etc/os-net-config/element_config.json\n" + string(rendered) + "---\n"
	if !strings.HasPrefix(got.log, first) {
		t.Fatalf("%s: commands:\n%s\nwant first:\n%s", md, got.log, first)
	}
	cleanup := strings.Contains(got.log, "--cleanup")
	switch {
	case status == 0 && (got.err != nil || got.log != first):
		t.Fatalf("%s: os-net-config changed nothing: exit %d, commands:\n%s", md, exitcode.Of(got.err), got.log)
	case status == 2 && host != "" && (got.err != nil || got.log != first+"ip -o a\nping -c 1 "+host+"\n"):
		t.Fatalf("%s: the network changed: exit %d, commands:\n%s\nwant a ping of %s", md, exitcode.Of(got.err), got.log, host)
	case status == 2 && host == "" && (got.err != nil || got.log != first):
		t.Fatalf("%s: the network changed, no host: exit %d, commands:\n%s", md, exitcode.Of(got.err), got.log)
	case status != 0 && status != 2 && (exitcode.Of(got.err) != exitcode.Failure || !cleanup):
		t.Fatalf("%s: os-net-config failed: exit %d, commands:\n%s\nwant the safe defaults", md, exitcode.Of(got.err), got.log)
	}
	if ref != "" && (host == sedHost || status != 2) {
		got.err = nil
		got.compare(t, runReference(t, ref, dir))
	}
}

// readable tells whether os-net-config can read the file the template
// rendered from the value: yaml.safe_load of it is an object whose
// network_config is a list. An object is rendered as its JSON, so it is
// read as JSON (every JSON document is one YAML document to PyYAML; our
// YAML reader stumbles on a few, such as escaped surrogate pairs).
func readable(v jsondoc.Value, rendered []byte) bool {
	var loaded jsondoc.Value
	var err error
	if _, isObject := v.(*jsondoc.Object); isObject {
		loaded, err = jsondoc.Loads(rendered)
	} else {
		loaded, err = pyyaml.SafeLoad(rendered)
	}
	obj, ok := loaded.(*jsondoc.Object)
	if err != nil || !ok {
		return false
	}
	list, _ := obj.Get("network_config")
	_, ok = jsondoc.Materialized(list).([]jsondoc.Value)
	return ok
}

// sedPattern is the reference's sed 's|http.*://\([^:]*\).*|\1|'.
var sedPattern = regexp.MustCompile(`http.*://([^:]*).*`)

// pingHost reads the Heat endpoints as the reference's loop does: the
// first one set (not absent, null or empty) names the host to ping, its
// URL's host (sedHost: as the reference's sed took it), and must be an
// http or https URL with a host, one word; else badKey names it.
func pingHost(doc *jsondoc.Object) (host, sedHost, badKey string) {
	for _, key := range urlKeys {
		v, found := metadata.Lookup(doc, key)
		if !found {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", "", key
		}
		if strings.TrimRight(s, "\n") == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || !regexp.MustCompile(`^https?://\S+$`).MatchString(s) || u.Hostname() == "" || strings.ContainsRune(s, 0x7f) {
			return "", "", key
		}
		return u.Hostname(), sedPattern.ReplaceAllString(s, "$1"), ""
	}
	return "", "", ""
}
