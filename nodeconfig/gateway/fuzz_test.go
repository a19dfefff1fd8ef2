package gateway

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

// gatewayInput is one fuzz input: the JSON of network-config's value,
// the node's /etc/sysconfig/network, and the layout: 0 no /etc/sysconfig
// (Debian), 1 the directory without the file, 2 the directory and the
// file.
type gatewayInput struct {
	networkConfig, file string
	layout              uint8
}

var gatewaySeeds = []gatewayInput{
	{`{"gateway-dev": "eth1"}`, "NETWORKING=yes\nHOSTNAME=node0\n", 2},
	{`{"gateway-dev": "br-ex"}`, "NETWORKING=yes\n  GATEWAYDEV=eth0 # dhcp\n#GATEWAYDEV=eth9\nNOZEROCONF=yes\n", 2},
	{`{"gateway-dev": "eth1"}`, "#GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth0.10:1"}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth1"}`, "", 1},
	{`{"gateway-dev": "eth1"}`, "", 0},
	{`{"gateway-dev": "eth1"}`, "NETWORKING=yes", 2},
	{`{"gateway-dev": "eth1"}`, "\tGATEWAYDEV=eth0\r\nX=GATEWAYDEV=y\n", 2},
	{`{"gateway-dev": ""}`, "GATEWAYDEV=eth0\n", 2},
	{`{}`, "GATEWAYDEV=eth0\n", 0},
	{`null`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": null}`, "GATEWAYDEV=eth0\n", 2},
	{`["eth1"]`, "GATEWAYDEV=eth0\n", 2},
	{`"eth1"`, "GATEWAYDEV=eth0\n", 2},
	{`5`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": 5}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": ["eth1"]}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth1\u0000"}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth1\neth2"}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth1\r"}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth1 eth2"}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth/1"}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth1&"}`, "GATEWAYDEV=eth0\n", 2},
	{`{"gateway-dev": "eth1"}`, "GATEWAYDEV=eth0\x00\n", 2},
}

// FuzzGateway runs 25-set-network-gateway on a fuzzed network-config and
// /etc/sysconfig/network, with recording fakes of ifdown and ifup.
// network-config that is not an object, or a gateway-dev that is not a
// string naming an interface, is one error line naming the key; a node
// without /etc/sysconfig is one line naming the file; either way no
// command runs and nothing under the root is touched. No interface is a
// message and nothing touched either. Otherwise the file is the
// reference's sed or echo >> of it (a line of its own when the file
// lacked a final newline, docs/compat.md) and the interface is
// restarted. With FUZZ_REFERENCE=1 (TRIPLEO_IMAGE_ELEMENTS, as root)
// each input the step takes is also run by the reference's script and
// must leave the same (but for that documented difference).
func FuzzGateway(f *testing.F) {
	for _, s := range gatewaySeeds {
		f.Add(s.networkConfig, s.file, s.layout)
	}
	var script string
	if os.Getenv("FUZZ_REFERENCE") == "1" {
		script = nodeconfigtest.Reference(f, referenceScript)
	}
	f.Fuzz(func(t *testing.T, networkConfig, file string, layout uint8) {
		checkGateway(t, script, gatewayInput{networkConfig, file, layout})
	})
}

const referenceScript = "elements/network-gateway/os-refresh-config/configure.d/25-set-network-gateway"

// TestGatewaySeedsAgainstReference compares the seeds and the kept
// inputs of FuzzGateway (with FUZZ_GENERATED=1, also those the fuzzer
// kept in the build cache) with the reference's script.
func TestGatewaySeedsAgainstReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference")
	}
	script := nodeconfigtest.Reference(t, referenceScript)
	inputs := append([]gatewayInput(nil), gatewaySeeds...)
	for _, vals := range difftest.FuzzCorpus(t, "FuzzGateway") {
		inputs = append(inputs, gatewayInput{vals[0].(string), vals[1].(string), vals[2].(uint8)})
	}
	for i, in := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkGateway(t, script, in) })
	}
	t.Logf("%d inputs compared", len(inputs))
}

// interfaceName is what the step takes for an interface: the kernel's
// names and ifcfg's aliases, nothing sed or the shell would read as
// something else.
var interfaceName = regexp.MustCompile(`^[A-Za-z0-9_.:@-]+$`)

func checkGateway(t *testing.T, script string, in gatewayInput) {
	md := `{"network-config": ` + in.networkConfig + `}`
	v, err := jsondoc.Loads([]byte(md))
	doc, ok := v.(*jsondoc.Object)
	if err != nil || !ok {
		return // not metadata
	}
	c := nodeconfigtest.Case{Name: "fuzz", Metadata: md}
	switch in.layout % 3 {
	case 1:
		c.Dirs = []string{Sysconfig}
	case 2:
		c.Files = map[string]string{File: "0644:" + in.file}
	}
	r := nodeconfigtest.Run(t, c, Run)
	unchanged := func() {
		t.Helper()
		if r.Commands != "" || r.After != r.Before {
			t.Fatalf("%s: something changed: commands %q, root:\n%s", md, r.Commands, difftest.LineDiff(r.Before, r.After))
		}
	}
	refused := func(key string) {
		t.Helper()
		if exitcode.Of(r.Err) != exitcode.Failure || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 ||
			!regexp.MustCompile(`^`+Name+`: ERROR: `+regexp.QuoteMeta(key)+`[ :.]`).MatchString(r.Stderr) {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want one error line naming %s", md, exitcode.Of(r.Err), r.Stdout, r.Stderr, key)
		}
		unchanged()
	}

	if nc, found := metadata.Lookup(doc, "network-config"); found {
		if _, ok := nc.(*jsondoc.Object); !ok {
			refused("network-config")
			return
		}
	}
	dv, found := metadata.Lookup(doc, Key)
	if !found || dv == "" {
		if r.Err != nil || r.Stdout != "$new_gatewaydev not set\n" {
			t.Fatalf("%s: no interface: exit %d, stdout %q", md, exitcode.Of(r.Err), r.Stdout)
		}
		unchanged()
		return
	}
	dev, ok := dv.(string)
	if !ok || !interfaceName.MatchString(dev) {
		refused(Key)
		return
	}
	if in.layout%3 == 0 {
		refused(File)
		return
	}
	if r.Err != nil || r.Commands != "ifdown "+dev+"\nifup "+dev+"\n" {
		t.Fatalf("%s: exit %d (%v), commands %q; want the interface restarted", md, exitcode.Of(r.Err), r.Err, r.Commands)
	}
	old := ""
	if in.layout%3 == 2 {
		old = in.file
	}
	want := fmt.Sprintf("  %s 0644 %q\n", File, sedOrAppend(old, dev))
	if !strings.HasSuffix(r.Text, "files:\n"+want) {
		t.Fatalf("%s: on %q:\n%s\nwant the file\n%s", md, old, r.Text, want)
	}
	if script == "" {
		return
	}
	if old != "" && !strings.HasSuffix(old, "\n") && !grepSet.MatchString(old) {
		return // no-final-newline: the reference glues the line to the last one (docs/compat.md)
	}
	if !utf8.ValidString(old) {
		return // GNU sed's "." matches no byte of an invalid sequence in a UTF-8 locale
	}
	if ref := nodeconfigtest.RunReference(t, c, script, ""); ref != r.Text {
		t.Fatalf("%s on %q:\n--- reference\n%s--- ours\n%s", md, old, ref, r.Text)
	}
}

// grepSet is the reference's grep -e "^\s*GATEWAYDEV=" over the lines.
var grepSet = regexp.MustCompile(`(?m)^[ \t\v\f\r]*GATEWAYDEV=`)

// sedOrAppend is the file as the reference leaves it (grep -e
// "^\s*GATEWAYDEV=", then sed "s/GATEWAYDEV=.*/GATEWAYDEV=$dev/" or
// echo >>), but that an appended line starts a line of its own.
func sedOrAppend(text, dev string) string {
	if grepSet.MatchString(text) {
		return regexp.MustCompile(`GATEWAYDEV=[^\n]*`).ReplaceAllLiteralString(text, "GATEWAYDEV="+dev)
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + "GATEWAYDEV=" + dev + "\n"
}
