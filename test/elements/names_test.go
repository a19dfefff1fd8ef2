package elements

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The elements' own maps, per distribution: what a CentOS or a Debian
// image gets for each name.
func TestElementsPackageNames(t *testing.T) {
	elements := []string{"hosts", "sysctl", "hiera", "heat-config-docker-compose"}
	want := map[string]map[string]string{
		"debian": {"hosts lsb_release": "lsb-release", "sysctl procps": "procps", "hiera deep_merge": "ruby-deep-merge",
			"heat-config-docker-compose docker.io": "docker.io", "heat-config-docker-compose docker-compose": "docker-compose"},
		"fedora": {"hosts lsb_release": "lsb_release", "sysctl procps": "procps-ng", "hiera deep_merge": "rubygem-deep_merge",
			"heat-config-docker-compose docker.io": "moby-engine", "heat-config-docker-compose docker-compose": "docker-compose"},
		"centos": {"hosts lsb_release": "redhat-lsb-core", "sysctl procps": "procps-ng", "hiera deep_merge": "rubygem-deep_merge",
			"heat-config-docker-compose docker.io": "moby-engine", "heat-config-docker-compose docker-compose": "docker-compose"},
	}
	want["ubuntu"] = want["debian"]
	want["rhel"], want["rocky"] = want["centos"], want["centos"]
	installs := map[string]string{"debian": "install.d install ruby-deep-merge", "ubuntu": "install.d install ruby-deep-merge"}
	for _, d := range []string{"fedora", "centos", "rhel", "rocky"} {
		installs[d] = "install.d install rubygem-deep_merge"
	}
	for distro, names := range want {
		t.Run(distro, func(t *testing.T) {
			t.Parallel()
			out, errs, code := dryRun(t, elementsDir, []string{"DISTRO_NAME=" + distro}, elements...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			got := map[string]string{}
			var plan []string
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if f := strings.Fields(l); len(f) >= 3 && f[0] == "pkg-map" {
					got[f[1]+" "+f[2]] = strings.Join(f[3:], " ")
				} else {
					plan = append(plan, l)
				}
			}
			for k, v := range names {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
			if len(got) != len(names) {
				t.Errorf("maps %v, want %v", got, names)
			}
			if strings.Join(plan, "\n") != installs[distro] {
				t.Errorf("plan %q, want %q", plan, installs[distro])
			}
		})
	}
}

// diskimage-builder's install-packages -m runs pkg-map without
// --missing-ok: every name an element's script maps must be in its map
// (its default section, so that every distribution has it).
func TestMappedNamesHaveADefault(t *testing.T) {
	scripts, _ := filepath.Glob(filepath.Join(elementsDir, "*", "*.d", "*"))
	re := regexp.MustCompile(`install-packages -m (\S+) ([^\n;|&]+)`)
	n := 0
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, sub := range re.FindAllStringSubmatch(string(b), -1) {
			n++
			element := sub[1]
			if want := filepath.Base(filepath.Dir(filepath.Dir(s))); element != want {
				t.Errorf("%s maps with %s's pkg-map, not its own (%s)", s, element, want)
			}
			mb, err := os.ReadFile(filepath.Join(elementsDir, element, "pkg-map"))
			if err != nil {
				t.Errorf("%s: %v", s, err)
				continue
			}
			var m struct{ Default map[string]string }
			if err := json.Unmarshal(mb, &m); err != nil {
				t.Fatalf("%s/pkg-map: %v", element, err)
			}
			for _, name := range strings.Fields(sub[2]) {
				if _, ok := m.Default[name]; !ok {
					t.Errorf("%s: %s has no default in %s/pkg-map", s, name, element)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no install-packages -m in the elements' scripts")
	}
}
