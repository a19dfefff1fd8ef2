package install

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const exampleConf = "../../examples/os-collect-config.conf"

// exampleOption is a `#name = value` or `name = value` line of the
// example, in its section.
var exampleOption = regexp.MustCompile(`^#?([a-z_]+) = (.*)$`)

// The example configuration the package ships in /usr/share/doc: as it
// is and with every commented option turned on, os-collect-config reads
// it, and every option it shows is one os-collect-config has.
func TestExampleConfig(t *testing.T) {
	d := installed(t)
	occ := filepath.Join(d, "usr/bin/os-collect-config")
	help, err := exec.Command(occ, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("os-collect-config --help: %v\n%s", err, help)
	}
	f, err := os.Open(exampleConf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all strings.Builder
	section, options := "", 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			all.WriteString(line + "\n")
			continue
		}
		m := exampleOption.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		options++
		all.WriteString(m[1] + " = " + m[2] + "\n")
		flag := "--"
		if section != "DEFAULT" {
			flag += section + "-"
		}
		if section == "DEFAULT" && m[1] == "collectors" {
			// positional on the command line: a collector's name,
			// which prefixes its group's options
			if !strings.Contains(string(help), "--"+m[2]+"-") {
				t.Errorf("collectors = %s: os-collect-config has no such collector (no --%s- option in --help)", m[2], m[2])
			}
			continue
		}
		// the command line spells a name with dashes, or as the group
		// declared it (--keystone-cache_dir)
		if dashed := flag + strings.ReplaceAll(m[1], "_", "-"); !regexp.MustCompile(regexp.QuoteMeta(dashed)+`\b`).Match(help) &&
			!regexp.MustCompile(regexp.QuoteMeta(flag+m[1])+`\b`).Match(help) {
			t.Errorf("[%s] %s: os-collect-config has no such option (no %s in --help)", section, m[1], dashed)
		}
	}
	if options < 40 {
		t.Errorf("the example shows %d options, want every one os-collect-config reads from a file", options)
	}
	on := filepath.Join(t.TempDir(), "on.conf")
	if err := os.WriteFile(on, []byte(all.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, conf := range []string{exampleConf, on} {
		out, err := exec.Command(occ, "--config-file", conf, "--print-cachedir").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "/var/lib/os-collect-config" {
			t.Errorf("os-collect-config --config-file %s --print-cachedir: %v\n%s", conf, err, out)
		}
	}
}
