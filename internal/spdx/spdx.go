// Package spdx writes the software bill of materials of a release's
// binary, an SPDX 2.3 JSON document made from the binary's own build
// information (the Go modules linked in, with the versions and go.sum
// hashes the build used), and checks such a document's structure.
//
// Everything in a document comes from its inputs: no clock, no random
// identifier. The same binary, name, version and time give the same bytes,
// so a reproducible build gives a reproducible SBOM (packaging/release.sh
// passes SOURCE_DATE_EPOCH as the time).
package spdx

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// Version is the SPDX specification the documents follow.
const Version = "SPDX-2.3"

// Tool names the writer in creationInfo.creators.
const Tool = "Tool: tripleo-agent-sbom (tools/sbom)"

// NamespaceBase prefixes documentNamespace; the document's name (which
// carries the version and the architecture) completes it.
const NamespaceBase = "https://github.com/tripleo-go/agent/spdx/"

// Document is an SPDX 2.3 document, its fields in the specification's
// order and with its JSON names.
type Document struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      CreationInfo   `json:"creationInfo"`
	Packages          []Package      `json:"packages"`
	Relationships     []Relationship `json:"relationships"`
}

// CreationInfo says when and by what a document was made.
type CreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// Package is one SPDX package: the program, a Go module, the standard
// library.
type Package struct {
	Name                  string        `json:"name"`
	SPDXID                string        `json:"SPDXID"`
	VersionInfo           string        `json:"versionInfo"`
	DownloadLocation      string        `json:"downloadLocation"`
	FilesAnalyzed         bool          `json:"filesAnalyzed"`
	Checksums             []Checksum    `json:"checksums,omitempty"`
	LicenseConcluded      string        `json:"licenseConcluded"`
	LicenseDeclared       string        `json:"licenseDeclared"`
	CopyrightText         string        `json:"copyrightText"`
	Comment               string        `json:"comment,omitempty"`
	ExternalRefs          []ExternalRef `json:"externalRefs"`
	PrimaryPackagePurpose string        `json:"primaryPackagePurpose"`
}

// Checksum is a package's digest, hex-encoded.
type Checksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

// ExternalRef is a package's identifier elsewhere: here its purl.
type ExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

// Relationship ties two elements: the document DESCRIBES the program,
// which DEPENDS_ON each module.
type Relationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

// Options are what the build information does not say.
type Options struct {
	// Name is the document's: the release artefact's base name,
	// tripleo-agent-<version>-linux-<goarch>.
	Name string
	// Program and Version are the described package's name and version
	// (the package version, not Go's module version).
	Program, Version string
	// License is the program's declared licence (an SPDX expression).
	License string
	// BinarySHA256 is the hex SHA-256 of the binary described.
	BinarySHA256 string
	// Created is the document's time (SOURCE_DATE_EPOCH).
	Created time.Time
}

const noAssertion = "NOASSERTION"

// New is the document of the binary whose build information is info.
func New(info *debug.BuildInfo, o Options) (*Document, error) {
	if o.Name == "" || o.Program == "" || o.Version == "" {
		return nil, fmt.Errorf("spdx: a document needs a name, a program and a version")
	}
	if b, err := hex.DecodeString(o.BinarySHA256); err != nil || len(b) != 32 {
		return nil, fmt.Errorf("spdx: not a hex SHA-256: %q", o.BinarySHA256)
	}
	license := o.License
	if license == "" {
		license = noAssertion
	}
	main := Package{
		Name:        o.Program,
		SPDXID:      "SPDXRef-Package-" + idPart(o.Program),
		VersionInfo: o.Version,
		// Where to fetch the program's source is the release's to say,
		// not the binary's: its commit is in the comment (vcs.revision).
		DownloadLocation: noAssertion,
		Checksums:        []Checksum{{Algorithm: "SHA256", ChecksumValue: strings.ToLower(o.BinarySHA256)}},
		LicenseConcluded: noAssertion,
		LicenseDeclared:  license,
		CopyrightText:    noAssertion,
		Comment:          buildComment(info),
		ExternalRefs:     []ExternalRef{purl(info.Main.Path, info.Main.Version)},
		// The binary, not its module: what the artefacts ship.
		PrimaryPackagePurpose: "APPLICATION",
	}
	doc := &Document{
		SPDXVersion:       Version,
		DataLicense:       "CC0-1.0",
		SPDXID:            "SPDXRef-DOCUMENT",
		Name:              o.Name,
		DocumentNamespace: NamespaceBase + url.PathEscape(o.Name),
		CreationInfo: CreationInfo{
			Created:  o.Created.UTC().Format(time.RFC3339),
			Creators: []string{Tool},
		},
		Packages:      []Package{main},
		Relationships: []Relationship{{"SPDXRef-DOCUMENT", "DESCRIBES", main.SPDXID}},
	}
	seen := map[string]string{main.SPDXID: main.Name}
	add := func(p Package) error {
		if other, dup := seen[p.SPDXID]; dup {
			return fmt.Errorf("spdx: %s and %s would share the identifier %s", other, p.Name, p.SPDXID)
		}
		seen[p.SPDXID] = p.Name
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, Relationship{main.SPDXID, "DEPENDS_ON", p.SPDXID})
		return nil
	}
	// The standard library is linked in too, and is what most advisories
	// against a Go binary name (pkg:golang/stdlib, the version without "go").
	if goVersion := strings.TrimPrefix(info.GoVersion, "go"); goVersion != "" {
		err := add(Package{
			Name:                  "stdlib",
			SPDXID:                "SPDXRef-Package-go-stdlib-" + idPart(goVersion),
			VersionInfo:           info.GoVersion,
			DownloadLocation:      noAssertion,
			LicenseConcluded:      noAssertion,
			LicenseDeclared:       "BSD-3-Clause",
			CopyrightText:         noAssertion,
			ExternalRefs:          []ExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/stdlib@" + goVersion}},
			PrimaryPackagePurpose: "LIBRARY",
		})
		if err != nil {
			return nil, err
		}
	}
	for _, dep := range info.Deps {
		p, err := module(dep)
		if err != nil {
			return nil, err
		}
		if err := add(p); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// module is the package of a Go module the binary links, as go.sum and
// the module proxy know it (a replacement's, when the module was
// replaced).
func module(m *debug.Module) (Package, error) {
	if m.Replace != nil {
		m = m.Replace
	}
	p := Package{
		Name:                  m.Path,
		SPDXID:                "SPDXRef-Package-go-module-" + idPart(m.Path) + "-" + idPart(m.Version),
		VersionInfo:           m.Version,
		DownloadLocation:      goLocation(m.Path, m.Version),
		LicenseConcluded:      noAssertion,
		LicenseDeclared:       noAssertion,
		CopyrightText:         noAssertion,
		ExternalRefs:          []ExternalRef{purl(m.Path, m.Version)},
		PrimaryPackagePurpose: "LIBRARY",
	}
	if p.VersionInfo == "" {
		// A replacement by a directory has no version.
		p.VersionInfo = noAssertion
	}
	if m.Sum != "" {
		// go.sum's h1: is base64 of a SHA-256 (of the module's file
		// list and their own SHA-256s); SPDX takes digests in hex.
		digest, ok := strings.CutPrefix(m.Sum, "h1:")
		b, err := base64.StdEncoding.DecodeString(digest)
		if !ok || err != nil || len(b) != 32 {
			return Package{}, fmt.Errorf("spdx: %s %s: not an h1: hash: %q", m.Path, m.Version, m.Sum)
		}
		p.Checksums = []Checksum{{Algorithm: "SHA256", ChecksumValue: hex.EncodeToString(b)}}
		p.Comment = "checksum: the module's go.sum hash, " + m.Sum + ", hex-encoded"
	}
	return p, nil
}

// purl is a module's package URL (pkg:golang/path@version; no version for
// a build that has none, "(devel)"). The module path keeps its capitals,
// as govulncheck writes it: Go's module paths are case-sensitive, whatever
// the purl type's older note says of lower case.
func purl(path, version string) ExternalRef {
	locator := "pkg:golang/" + path
	if isModuleVersion(version) {
		locator += "@" + url.PathEscape(version)
	}
	return ExternalRef{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: locator}
}

// goLocation is where the Go module proxy serves a module's zip, its path
// and version case-encoded as the proxy protocol asks ("!" before a
// lower-cased capital).
func goLocation(path, version string) string {
	if !isModuleVersion(version) {
		return noAssertion
	}
	return "https://proxy.golang.org/" + proxyEscape(path) + "/@v/" + proxyEscape(version) + ".zip"
}

func isModuleVersion(v string) bool { return strings.HasPrefix(v, "v") }

func proxyEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// buildComment lists how the binary was built (the build settings go
// version -m prints), in the order Go records them.
func buildComment(info *debug.BuildInfo) string {
	var s []string
	for _, kv := range info.Settings {
		s = append(s, kv.Key+"="+kv.Value)
	}
	return "go build: " + info.GoVersion + " " + info.Path + "; " + strings.Join(s, " ")
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// idPart makes s fit an SPDX identifier (letters, digits, "." and "-").
func idPart(s string) string { return idUnsafe.ReplaceAllString(s, "-") }

// Marshal is the document as release.sh writes it: indented JSON and a
// final newline.
func (d *Document) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
