package render

import "bytes"

// Compile checks and parses a loaded mustache template, once; Render
// does it if no one did before. Parsing needs no metadata, so templates
// can be compiled ahead while the metadata is still being parsed, on a
// core that would otherwise wait. An executable or unreadable source
// has nothing to compile.
func (s *Source) Compile() {
	if s.executable || s.err != nil || s.compiled != nil || s.compileErr != nil {
		return
	}
	s.compiled, s.compileErr = compile(s.data)
	if bytes.Contains(s.data, []byte("0x")) {
		s.hexText = s.data // see output.text
	}
	s.data = nil // the template holds its text
}
