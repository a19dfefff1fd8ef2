package spdx

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Validate checks that b is an SPDX 2.3 JSON document with what the
// specification requires and what a release's SBOM promises: the
// document's fields, creationInfo, each package's name, identifier,
// download location and version, its checksums well-formed, a pkg:golang
// purl for every package, and relationships between known elements: the
// document DESCRIBES one package, with a SHA-256 (the binary's), which
// DEPENDS_ON every other. It reads the JSON as a generic tree, not through
// Document, so it checks the bytes and not what New meant to write. Every
// problem found is reported, one per line.
func Validate(b []byte) error {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("spdx: not a JSON object: %w", err)
	}
	v := &validator{}
	v.equal(doc, "spdxVersion", Version)
	v.equal(doc, "dataLicense", "CC0-1.0")
	v.equal(doc, "SPDXID", "SPDXRef-DOCUMENT")
	v.text(doc, "name")
	if ns := v.text(doc, "documentNamespace"); ns != "" {
		if u, err := url.Parse(ns); err != nil || u.Scheme == "" || u.Host == "" || strings.Contains(ns, "#") {
			v.fail("documentNamespace: not an absolute URI without a fragment: %q", ns)
		}
	}
	if ci, ok := doc["creationInfo"].(map[string]any); !ok {
		v.fail("creationInfo: missing")
	} else {
		if c := v.text(ci, "created"); c != "" && !createdRE.MatchString(c) {
			v.fail("creationInfo.created: not YYYY-MM-DDThh:mm:ssZ: %q", c)
		}
		creators, _ := ci["creators"].([]any)
		if len(creators) == 0 {
			v.fail("creationInfo.creators: none")
		}
		for _, c := range creators {
			if s, _ := c.(string); !creatorRE.MatchString(s) {
				v.fail("creationInfo.creators: not Tool:, Organization: or Person:: %v", c)
			}
		}
	}

	ids := map[string]map[string]any{}
	packages, _ := doc["packages"].([]any)
	if len(packages) == 0 {
		v.fail("packages: none")
	}
	for i, p := range packages {
		pkg, ok := p.(map[string]any)
		if !ok {
			v.fail("packages[%d]: not an object", i)
			continue
		}
		name := v.text(pkg, "name")
		where := fmt.Sprintf("packages[%d] (%s)", i, name)
		id := v.text(pkg, "SPDXID")
		switch {
		case id != "" && !idRE.MatchString(id):
			v.fail("%s: SPDXID %q is not SPDXRef-[A-Za-z0-9.-]+", where, id)
		case ids[id] != nil:
			v.fail("%s: SPDXID %q is used twice", where, id)
		case id != "":
			ids[id] = pkg
		}
		v.text(pkg, "downloadLocation")
		v.text(pkg, "versionInfo")
		// filesAnalyzed defaults to true, which needs the files and a
		// verification code; a binary's SBOM lists no files.
		if fa, ok := pkg["filesAnalyzed"].(bool); !ok || fa {
			v.fail("%s: filesAnalyzed is not false", where)
		}
		sums, _ := pkg["checksums"].([]any)
		for _, c := range sums {
			cs, _ := c.(map[string]any)
			alg, _ := cs["algorithm"].(string)
			val, _ := cs["checksumValue"].(string)
			n, known := digestBytes[alg]
			if raw, err := hex.DecodeString(val); !known || err != nil || len(raw) != n || val != strings.ToLower(val) {
				v.fail("%s: checksum %s %q: not a known algorithm with its lower-case hex digest", where, alg, val)
			}
		}
		purls := 0
		refs, _ := pkg["externalRefs"].([]any)
		for _, r := range refs {
			ref, _ := r.(map[string]any)
			if ref["referenceType"] != "purl" {
				continue
			}
			purls++
			loc, _ := ref["referenceLocator"].(string)
			if cat := ref["referenceCategory"]; cat != "PACKAGE-MANAGER" && cat != "PACKAGE_MANAGER" {
				v.fail("%s: purl's referenceCategory is %v, not PACKAGE-MANAGER", where, cat)
			}
			if !purlRE.MatchString(loc) {
				v.fail("%s: purl %q is not pkg:golang/...", where, loc)
			}
		}
		if purls != 1 {
			v.fail("%s: %d purls, not one", where, purls)
		}
	}

	var described []string
	depends := map[string]bool{}
	rels, _ := doc["relationships"].([]any)
	for i, r := range rels {
		rel, _ := r.(map[string]any)
		from, _ := rel["spdxElementId"].(string)
		typ, _ := rel["relationshipType"].(string)
		to, _ := rel["relatedSpdxElement"].(string)
		if from != "SPDXRef-DOCUMENT" && ids[from] == nil {
			v.fail("relationships[%d]: spdxElementId %q names no element", i, from)
		}
		if ids[to] == nil {
			v.fail("relationships[%d]: relatedSpdxElement %q names no package", i, to)
		}
		switch typ {
		case "DESCRIBES":
			if from == "SPDXRef-DOCUMENT" {
				described = append(described, to)
			}
		case "DEPENDS_ON":
			depends[from+" "+to] = true
		default:
			v.fail("relationships[%d]: relationshipType %q is neither DESCRIBES nor DEPENDS_ON", i, typ)
		}
	}
	if len(described) != 1 {
		v.fail("relationships: the document DESCRIBES %d packages, not one", len(described))
	} else if main := ids[described[0]]; main != nil {
		if !hasSHA256(main) {
			v.fail("the described package %s has no SHA256 checksum (the binary's)", described[0])
		}
		for id := range ids {
			if id != described[0] && !depends[described[0]+" "+id] {
				v.fail("relationships: %s does not DEPEND_ON %s", described[0], id)
			}
		}
	}
	return v.err()
}

var (
	createdRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	creatorRE = regexp.MustCompile(`^(Tool|Organization|Person): \S`)
	idRE      = regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)
	purlRE    = regexp.MustCompile(`^pkg:golang/[^@\s]+(@[^@\s]+)?$`)
	// The SPDX 2.3 checksum algorithms this checks, with their sizes.
	digestBytes = map[string]int{"SHA1": 20, "SHA224": 28, "SHA256": 32, "SHA384": 48, "SHA512": 64, "MD5": 16}
)

func hasSHA256(pkg map[string]any) bool {
	sums, _ := pkg["checksums"].([]any)
	for _, c := range sums {
		if cs, _ := c.(map[string]any); cs["algorithm"] == "SHA256" {
			return true
		}
	}
	return false
}

type validator struct{ problems []string }

func (v *validator) fail(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// text is obj's string field key, reported when missing or empty.
func (v *validator) text(obj map[string]any, key string) string {
	s, ok := obj[key].(string)
	if !ok || s == "" {
		v.fail("%s: missing or empty", key)
	}
	return s
}

func (v *validator) equal(obj map[string]any, key, want string) {
	if got, _ := obj[key].(string); got != want {
		v.fail("%s: %q, not %q", key, got, want)
	}
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return errors.New("spdx: " + strings.Join(v.problems, "\nspdx: "))
}
