package deb

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// scriptsOf extracts the package's maintainer scripts into a directory.
func scriptsOf(t *testing.T, deb string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, time.Minute, "dpkg-deb", "-e", deb, dir)
	return dir
}

// divertList is the "path diverted-name" list a maintainer script
// carries (the here-document build-deb.sh fills in).
func divertList(t *testing.T, script string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "cat <<'EOF'\n")
	if !ok {
		t.Fatalf("%s has no diversion list", script)
	}
	list, _, _ := strings.Cut(rest, "\nEOF\n")
	m := map[string]string{}
	for _, l := range strings.Split(list, "\n") {
		f := strings.Fields(l)
		if len(f) != 2 || !strings.HasPrefix(f[0], "/") || !strings.HasPrefix(f[1], "/") {
			t.Fatalf("%s: diversion line %q", script, l)
		}
		m[strings.TrimPrefix(f[0], "/")] = strings.TrimPrefix(f[1], "/")
	}
	return m
}

// The preinst, postinst and postrm carry the same list: every file of
// the package under /usr/libexec and the unit, each with its diverted
// name.
func TestDiversionList(t *testing.T) {
	deb := pkg(t, "")
	dir := scriptsOf(t, deb)
	want := map[string]string{}
	for _, p := range diverted(t, deb) {
		want[p] = divertTo(p)
	}
	if len(want) != 21 {
		t.Errorf("%d paths to divert, want 21 (6 os-refresh-config scripts, 12 hooks, the template and its .oac, the unit): %v", len(want), want)
	}
	if _, ok := want[unitPath]; !ok {
		t.Errorf("the unit is not diverted: %v", want)
	}
	for _, s := range []string{"preinst", "postinst", "postrm"} {
		if got := divertList(t, filepath.Join(dir, s)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s diverts\n%v\nwant\n%v", s, got, want)
		}
	}
}

// fakeDpkg is a directory for PATH with a dpkg-query that lists the
// files of tripleo-agent in $OWNED, a dpkg-divert that keeps its
// diversions (path and package) in $DIVERTED and logs each call in $LOG,
// and, lest a script reach the host's, a deb-systemd-helper,
// deb-systemd-invoke and systemctl that fail.
func fakeDpkg(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "dpkg-query"), `#!/bin/sh
[ "$1 $2" = "-L tripleo-agent" ] || { echo "dpkg-query $*: unexpected" >&2; exit 2; }
[ -s "$OWNED" ] || { echo "dpkg-query: package 'tripleo-agent' is not installed" >&2; exit 1; }
cat "$OWNED"
`, 0o755)
	write(t, filepath.Join(dir, "dpkg-divert"), `#!/bin/sh
if [ "$1" = --listpackage ]; then
	grep -F -- "$2 " "$DIVERTED" | cut -d' ' -f2
	exit 0
fi
echo "$*" >>"$LOG"
path= mode=
for a; do path=$a; case $a in --add) mode=add ;; --remove) mode=remove ;; esac; done
grep -vF -- "$path " "$DIVERTED" >"$DIVERTED.new" || true
mv "$DIVERTED.new" "$DIVERTED"
if [ $mode = add ]; then echo "$path tripleo-agent" >>"$DIVERTED"; fi
`, 0o755)
	for _, p := range []string{"deb-systemd-helper", "deb-systemd-invoke", "systemctl"} {
		write(t, filepath.Join(dir, p), "#!/bin/sh\necho \"$0 $*: not in this test\" >&2\nexit 3\n", 0o755)
	}
	return dir
}

// runScript runs a maintainer script with the fake dpkg, owned and
// diverted listing absolute paths, under a DPKG_ROOT with files at the
// paths present; it returns dpkg-divert's calls but --listpackage,
// sorted.
func runScript(t *testing.T, script string, owned, diverted, present []string, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range present {
		write(t, filepath.Join(dir, "root", p), "", 0o644)
	}
	files := map[string]string{"OWNED": strings.Join(owned, "\n"), "DIVERTED": "", "LOG": ""}
	for _, p := range diverted {
		files["DIVERTED"] += p + " tripleo-agent\n"
	}
	env := []string{"PATH=" + fakeDpkg(t) + ":/usr/sbin:/usr/bin:/sbin:/bin", "DPKG_ROOT=" + filepath.Join(dir, "root"), "LC_ALL=C"}
	for name, content := range files {
		if content != "" && name == "OWNED" {
			content += "\n"
		}
		write(t, filepath.Join(dir, name), content, 0o644)
		env = append(env, name+"="+filepath.Join(dir, name))
	}
	if err := os.MkdirAll(filepath.Join(dir, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{script}, args...)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(script), strings.Join(args, " "), err, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "LOG"))
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if calls[0] == "" {
		calls = nil
	}
	sort.Strings(calls)
	return calls
}

// Which diversions the preinst adds, and which an aborted upgrade's
// postrm removes, for each state the build being upgraded may leave.
func TestDiversionScripts(t *testing.T) {
	t.Parallel()
	deb := pkg(t, "")
	dir := scriptsOf(t, deb)
	list := divertList(t, filepath.Join(dir, "preinst"))
	var all []string
	for p := range list {
		all = append(all, "/"+p)
	}
	sort.Strings(all)
	const newHook = "/usr/libexec/heat-config/hooks/chef"
	without := func(l []string, drop string) []string {
		var r []string
		for _, p := range l {
			if p != drop {
				r = append(r, p)
			}
		}
		return r
	}
	add := func(paths ...string) []string {
		var calls []string
		for _, p := range paths {
			calls = append(calls, fmt.Sprintf("--package tripleo-agent --quiet --rename --divert /%s --add %s", list[p[1:]], p))
		}
		sort.Strings(calls)
		return calls
	}
	remove := func(paths ...string) []string {
		var calls []string
		for _, p := range paths {
			calls = append(calls, fmt.Sprintf("--package tripleo-agent --quiet --rename --divert /%s --remove %s", list[p[1:]], p))
		}
		return calls
	}
	for _, c := range []struct {
		name             string
		args             []string
		owned, diverted  []string
		preinst, abortRm []string // dpkg-divert's calls
	}{
		{name: "first install", args: []string{"install"}, preinst: add(all...)},
		// A build before the diversions owns every path and diverts none:
		// the postinst diverts them, nothing is moved, and an aborted
		// upgrade has nothing to undo.
		{name: "upgrade from an undiverted build", args: []string{"upgrade", "0.1-1"}, owned: all},
		{name: "upgrade from a diverting build", args: []string{"upgrade", "0.2-1"}, owned: all, diverted: all},
		// A path the build being upgraded did not ship (a new hook) is the
		// image's if anything: diverted, and undiverted on an abort.
		{name: "upgrade to a build with a new path", args: []string{"upgrade", "0.2-1"}, owned: without(all, newHook),
			diverted: without(all, newHook), preinst: add(newHook), abortRm: remove(newHook)},
		{name: "upgrade from an undiverted build without a path", args: []string{"upgrade", "0.1-1"}, owned: without(all, newHook),
			preinst: add(newHook), abortRm: remove(newHook)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := runScript(t, filepath.Join(dir, "preinst"), c.owned, c.diverted, nil, c.args...); fmt.Sprint(got) != fmt.Sprint(c.preinst) {
				t.Errorf("preinst %s: dpkg-divert\n%s\nwant\n%s", strings.Join(c.args, " "), strings.Join(got, "\n"), strings.Join(c.preinst, "\n"))
			}
			if c.args[0] != "upgrade" {
				return
			}
			// The preinst's diversions, then the unpack fails: the postrm
			// is told abort-upgrade while dpkg still lists the old build's
			// files.
			afterPreinst := append([]string{}, c.diverted...)
			for _, call := range c.preinst {
				f := strings.Fields(call)
				afterPreinst = append(afterPreinst, f[len(f)-1])
			}
			got := runScript(t, filepath.Join(dir, "postrm"), c.owned, afterPreinst, nil, "abort-upgrade", c.args[1])
			if fmt.Sprint(got) != fmt.Sprint(c.abortRm) {
				t.Errorf("postrm abort-upgrade: dpkg-divert\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.abortRm, "\n"))
			}
		})
	}

	// On removal, a path something else took while the package was
	// installed keeps its file, and the image's stays under its diverted
	// name: the diversion goes without a rename.
	t.Run("remove with a path taken", func(t *testing.T) {
		const taken = "/usr/libexec/heat-config/hooks/script"
		got := runScript(t, filepath.Join(dir, "postrm"), nil, all, []string{taken, "/" + list[taken[1:]]}, "remove")
		want := append(remove(without(all, taken)...),
			fmt.Sprintf("--package tripleo-agent --quiet --no-rename --divert /%s --remove %s", list[taken[1:]], taken))
		sort.Strings(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("postrm remove: dpkg-divert\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
