// Command sbom writes the SPDX 2.3 JSON software bill of materials of a Go
// binary from its build information (internal/spdx): make release runs it
// on each architecture's binary. The document's time is -created (a Unix
// time, SOURCE_DATE_EPOCH), never the clock's, so the output reproduces.
//
//	sbom -binary usr/bin/tripleo-agent -name tripleo-agent-1.2-linux-arm64 \
//	    -version 1.2 -created "$SOURCE_DATE_EPOCH" -o out.spdx.json
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tripleo-go/agent/internal/spdx"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	binary := fs.String("binary", "", "the Go binary described")
	name := fs.String("name", "", "the document's name (the artefact's, tripleo-agent-<version>-linux-<goarch>)")
	program := fs.String("program", "tripleo-agent", "the described package's name")
	version := fs.String("version", "", "the described package's version")
	license := fs.String("license", "Apache-2.0", "the described package's licence (SPDX expression)")
	created := fs.Int64("created", -1, "the document's time, seconds since the epoch (SOURCE_DATE_EPOCH)")
	out := fs.String("o", "", "output file (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *created < 0 || fs.NArg() != 0 {
		return fmt.Errorf("usage: sbom -binary FILE -name NAME -version VERSION -created EPOCH [-o FILE]")
	}
	content, err := os.ReadFile(*binary)
	if err != nil {
		return err
	}
	info, err := buildinfo.ReadFile(*binary)
	if err != nil {
		return fmt.Errorf("%s: no Go build information: %w", *binary, err)
	}
	sum := sha256.Sum256(content)
	doc, err := spdx.New(info, spdx.Options{
		Name: *name, Program: *program, Version: *version, License: *license,
		BinarySHA256: hex.EncodeToString(sum[:]),
		Created:      time.Unix(*created, 0),
	})
	if err != nil {
		return err
	}
	b, err := doc.Marshal()
	if err != nil {
		return err
	}
	if err := spdx.Validate(b); err != nil {
		return fmt.Errorf("the document written would not be valid: %w", err)
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}
