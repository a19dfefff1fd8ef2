package spdx

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.spdx.json")

const binarySHA = "4f8a1c7e0b9d2f3a5c6e7d8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4"

func fixtureOptions() Options {
	return Options{
		Name:         "tripleo-agent-1.2.3~rc1-linux-arm64",
		Program:      "tripleo-agent",
		Version:      "1.2.3~rc1",
		License:      "Apache-2.0",
		BinarySHA256: binarySHA,
		Created:      time.Unix(1796026500, 0),
	}
}

func fixtureInfo(t *testing.T) *debug.BuildInfo {
	t.Helper()
	b, err := os.ReadFile("testdata/buildinfo.txt")
	if err != nil {
		t.Fatal(err)
	}
	info, err := debug.ParseBuildInfo(string(b))
	if err != nil {
		t.Fatal(err)
	}
	// ParseBuildInfo leaves the toolchain out; buildinfo.ReadFile sets it.
	first, _, _ := strings.Cut(string(b), "\n")
	info.GoVersion = strings.TrimPrefix(first, "go\t")
	return info
}

func marshal(t *testing.T, info *debug.BuildInfo, o Options) []byte {
	t.Helper()
	doc, err := New(info, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The document of a cross-built binary (go version -m's text, with a
// replaced module and a module path with capitals), against its golden
// file: the modules with their versions and go.sum hashes (the
// replacement's), the standard library, the binary's checksum, the purls,
// the relationships, and the time and namespace from the inputs alone.
func TestNewGolden(t *testing.T) {
	got := marshal(t, fixtureInfo(t), fixtureOptions())
	const golden = "testdata/arm64.spdx.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("document differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	if err := Validate(got); err != nil {
		t.Error(err)
	}
	// Built again, the same bytes: nothing from the clock or chance.
	if again := marshal(t, fixtureInfo(t), fixtureOptions()); !bytes.Equal(got, again) {
		t.Error("a second document of the same inputs differs")
	}
}

// What the golden file must say, spelled out.
func TestNewContents(t *testing.T) {
	var doc Document
	if err := json.Unmarshal(marshal(t, fixtureInfo(t), fixtureOptions()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.CreationInfo.Created != "2026-11-30T08:15:00Z" {
		t.Errorf("created %q, want SOURCE_DATE_EPOCH's 2026-11-30T08:15:00Z", doc.CreationInfo.Created)
	}
	if doc.DocumentNamespace != "https://github.com/tripleo-go/agent/spdx/tripleo-agent-1.2.3~rc1-linux-arm64" {
		t.Errorf("documentNamespace %q", doc.DocumentNamespace)
	}
	byName := map[string]Package{}
	for _, p := range doc.Packages {
		byName[p.Name] = p
	}
	for _, c := range []struct{ name, version, purl, location, sum string }{
		{"tripleo-agent", "1.2.3~rc1", "pkg:golang/github.com/tripleo-go/agent@v0.0.0-20261129081500-2b5a638abcde", "NOASSERTION", binarySHA},
		{"stdlib", "go1.26.8", "pkg:golang/stdlib@1.26.8", "NOASSERTION", ""},
		{"github.com/cbroglie/mustache", "v1.4.2", "pkg:golang/github.com/cbroglie/mustache@v1.4.2",
			"https://proxy.golang.org/github.com/cbroglie/mustache/@v/v1.4.2.zip",
			"c87bc08d5992c98c02984218abb901699e00f90de44988c985e2dd0761f6afd5"},
		{"github.com/BurntSushi/toml", "v1.4.0", "pkg:golang/github.com/BurntSushi/toml@v1.4.0",
			"https://proxy.golang.org/github.com/!burnt!sushi/toml/@v/v1.4.0.zip",
			"92ea08c59432d96451935a6db60f5ab1ff9656fead590b8135598af3e9ea3ebd"},
		// Replaced: the replacement's version and hash.
		{"golang.org/x/sys", "v0.49.0", "pkg:golang/golang.org/x/sys@v0.49.0",
			"https://proxy.golang.org/golang.org/x/sys/@v/v0.49.0.zip",
			"5dbce481824776a87ff26d94bb45bf750bfc9e4b71c780451e9d4cd2044e4d70"},
	} {
		p, ok := byName[c.name]
		if !ok {
			t.Errorf("no package %s", c.name)
			continue
		}
		if p.VersionInfo != c.version || p.ExternalRefs[0].ReferenceLocator != c.purl || p.DownloadLocation != c.location {
			t.Errorf("%s: version %q purl %q location %q, want %q %q %q", c.name,
				p.VersionInfo, p.ExternalRefs[0].ReferenceLocator, p.DownloadLocation, c.version, c.purl, c.location)
		}
		var sum string
		if len(p.Checksums) == 1 && p.Checksums[0].Algorithm == "SHA256" {
			sum = p.Checksums[0].ChecksumValue
		}
		if sum != c.sum {
			t.Errorf("%s: SHA256 %q, want %q", c.name, sum, c.sum)
		}
	}
	if len(doc.Packages) != 6 || len(doc.Relationships) != 6 {
		t.Errorf("%d packages and %d relationships, want 6 and 6 (the program, stdlib, 4 modules)",
			len(doc.Packages), len(doc.Relationships))
	}
	if !strings.Contains(byName["tripleo-agent"].Comment, "GOARCH=arm64") ||
		!strings.Contains(byName["tripleo-agent"].Comment, "vcs.revision=2b5a638abcdef0123456789abcdef0123456789a") {
		t.Errorf("the program's comment lacks the build settings: %q", byName["tripleo-agent"].Comment)
	}
}

// A real binary's build information (this test's own) makes a valid
// document.
func TestNewFromRunningBinary(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information")
	}
	if err := Validate(marshal(t, info, fixtureOptions())); err != nil {
		t.Error(err)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Options, *debug.BuildInfo)
		want string
	}{
		{"no name", func(o *Options, _ *debug.BuildInfo) { o.Name = "" }, "needs a name"},
		{"short digest", func(o *Options, _ *debug.BuildInfo) { o.BinarySHA256 = "abcd" }, "not a hex SHA-256"},
		{"bad h1", func(_ *Options, i *debug.BuildInfo) { i.Deps[0].Sum = "h1:xyz" }, "not an h1: hash"},
		{"colliding ids", func(_ *Options, i *debug.BuildInfo) {
			i.Deps = append(i.Deps, &debug.Module{Path: "github.com/cbroglie_mustache", Version: "v1.4.2"})
		}, "would share the identifier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, info := fixtureOptions(), fixtureInfo(t)
			c.edit(&o, info)
			_, err := New(info, o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

// Each break of a required field or a promise is caught, named.
func TestValidateRejects(t *testing.T) {
	valid := marshal(t, fixtureInfo(t), fixtureOptions())
	for _, c := range []struct {
		name string
		edit func(doc map[string]any)
		want string
	}{
		{"spdxVersion", func(d map[string]any) { d["spdxVersion"] = "SPDX-2.2" }, "spdxVersion"},
		{"no spdxVersion", func(d map[string]any) { delete(d, "spdxVersion") }, "spdxVersion"},
		{"dataLicense", func(d map[string]any) { d["dataLicense"] = "MIT" }, "dataLicense"},
		{"document id", func(d map[string]any) { d["SPDXID"] = "SPDXRef-DOC" }, "SPDXID"},
		{"no name", func(d map[string]any) { delete(d, "name") }, "name: missing"},
		{"relative namespace", func(d map[string]any) { d["documentNamespace"] = "tripleo-agent" }, "documentNamespace"},
		{"namespace fragment", func(d map[string]any) { d["documentNamespace"] = "https://x.example/a#b" }, "documentNamespace"},
		{"no creationInfo", func(d map[string]any) { delete(d, "creationInfo") }, "creationInfo: missing"},
		{"created format", func(d map[string]any) { ci(d)["created"] = "2026-12-01 08:15:00" }, "creationInfo.created"},
		{"no creators", func(d map[string]any) { ci(d)["creators"] = []any{} }, "creators: none"},
		{"creator form", func(d map[string]any) { ci(d)["creators"] = []any{"sbom"} }, "creators: not"},
		{"no packages", func(d map[string]any) { d["packages"] = []any{} }, "packages: none"},
		{"package id", func(d map[string]any) { pkg(d, 2)["SPDXID"] = "SPDXRef-a/b" }, "is not SPDXRef-"},
		{"duplicate id", func(d map[string]any) { pkg(d, 2)["SPDXID"] = pkg(d, 3)["SPDXID"] }, "used twice"},
		{"no downloadLocation", func(d map[string]any) { delete(pkg(d, 2), "downloadLocation") }, "downloadLocation: missing"},
		{"no versionInfo", func(d map[string]any) { delete(pkg(d, 2), "versionInfo") }, "versionInfo: missing"},
		{"files analyzed", func(d map[string]any) { pkg(d, 2)["filesAnalyzed"] = true }, "filesAnalyzed"},
		{"checksum length", func(d map[string]any) {
			pkg(d, 2)["checksums"] = []any{map[string]any{"algorithm": "SHA256", "checksumValue": "abcd"}}
		}, "checksum SHA256"},
		{"checksum algorithm", func(d map[string]any) {
			pkg(d, 2)["checksums"] = []any{map[string]any{"algorithm": "H1", "checksumValue": "abcd"}}
		}, "checksum H1"},
		{"no purl", func(d map[string]any) { pkg(d, 2)["externalRefs"] = []any{} }, "0 purls"},
		{"purl type", func(d map[string]any) { ref(d, 2)["referenceLocator"] = "pkg:pypi/six@1.0" }, "not pkg:golang/"},
		{"purl category", func(d map[string]any) { ref(d, 2)["referenceCategory"] = "OTHER" }, "referenceCategory"},
		{"no binary checksum", func(d map[string]any) { delete(pkg(d, 0), "checksums") }, "has no SHA256"},
		{"dangling relationship", func(d map[string]any) { rel(d, 1)["relatedSpdxElement"] = "SPDXRef-nothing" }, "names no package"},
		{"no DESCRIBES", func(d map[string]any) { rel(d, 0)["relationshipType"] = "CONTAINS" }, "neither DESCRIBES"},
		{"a dependency left out", func(d map[string]any) {
			d["relationships"] = d["relationships"].([]any)[:3]
		}, "does not DEPEND_ON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(valid, &doc); err != nil {
				t.Fatal(err)
			}
			c.edit(doc)
			b, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate: %v, want an error with %q", err, c.want)
			}
		})
	}
	if err := Validate([]byte("[]")); err == nil {
		t.Error("Validate accepted a JSON array")
	}
}

func ci(d map[string]any) map[string]any { return d["creationInfo"].(map[string]any) }
func pkg(d map[string]any, i int) map[string]any {
	return d["packages"].([]any)[i].(map[string]any)
}
func ref(d map[string]any, i int) map[string]any {
	return pkg(d, i)["externalRefs"].([]any)[0].(map[string]any)
}
func rel(d map[string]any, i int) map[string]any {
	return d["relationships"].([]any)[i].(map[string]any)
}
