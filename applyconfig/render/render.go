// Package render turns one template into a file body, as os-apply-config's
// reference does: a template the running user may execute is run with the
// metadata as JSON on stdin and its stdout is the body; any other template
// is mustache, rendered as pystache renders it with os-apply-config's
// settings (no HTML escaping, missing names empty, non-strings as JSON).
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/cbroglie/mustache"
	"golang.org/x/sys/unix"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/internal/pyerr"
	"github.com/tripleo-go/agent/internal/pyutf8"
)

// ExecTimeout bounds one executable template. The reference waits forever;
// a hung script must not hang every refresh of the node.
const ExecTimeout = 10 * time.Minute

// execGrace is an executable template's time between SIGTERM and SIGKILL
// once its time is up.
const execGrace = 5 * time.Second

// MaxExecOutput bounds what an executable template may write: its output
// is a file body held in memory (the reference read any amount).
const MaxExecOutput = 64 << 20

// Error is a template that could not be rendered. Msg is the reference's
// message; Detail, when set, is the cause it logs on a line of its own.
type Error struct {
	Msg    string
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Msg
	}
	return e.Detail + ": " + e.Msg
}

// Metadata is the merged metadata prepared for rendering many templates.
// It is read-only and safe for concurrent use.
type Metadata struct {
	cfg     jsondoc.Value
	vb      *viewBuilder
	view    any
	lazy    *lazyTop      // instead of view, for metadata read lazily (lazy.go)
	stdin   func() []byte // json.dumps(cfg), made once if an executable needs it
	execMu  sync.Mutex    // executable templates run one at a time, as in the reference
	timeout time.Duration
	// maxOutput bounds an executable template's output (MaxExecOutput).
	maxOutput int
}

// NewMetadata prepares cfg (a decoded JSON object) for rendering. An
// object holding *jsondoc.Raw values gets its view made as templates
// look into it.
func NewMetadata(cfg jsondoc.Value) *Metadata {
	vb := newViewBuilder()
	m := &Metadata{
		cfg:       cfg,
		vb:        vb,
		stdin:     sync.OnceValue(func() []byte { return []byte(jsondoc.Dumps(cfg)) }),
		timeout:   ExecTimeout,
		maxOutput: MaxExecOutput,
	}
	if top, ok := cfg.(*jsondoc.Object); ok && jsondoc.HoldsRaw(top) {
		m.lazy = newLazyTop(vb, top)
	} else {
		m.view = vb.view(cfg)
	}
	return m
}

// Source is a template file as read, before any metadata is needed: its
// text, or that it is executable, or why it could not be read.
type Source struct {
	path       string
	data       []byte
	executable bool
	err        error
	// compiled, once Compile has run: the parsed template, or why its
	// text is no template (see compile.go).
	compiled   *mustache.Template
	compileErr error
	hexText    []byte // its text, if it holds "0x" (output.text)
}

// Load reads the template file at path. What it finds (a read error
// included) is reported only when the source is rendered, so templates
// can be read ahead, while the metadata is still being parsed.
func Load(path string) *Source {
	data, executable, err := readTemplate(path)
	return &Source{path: path, data: data, executable: executable, err: err}
}

// Template renders the template file at path.
func (m *Metadata) Template(ctx context.Context, path string) ([]byte, error) {
	return m.Render(ctx, Load(path))
}

// Render renders a loaded template: runs it if executable, else renders
// its text as mustache.
func (m *Metadata) Render(ctx context.Context, s *Source) ([]byte, error) {
	var body []byte
	err := m.RenderTo(ctx, s, func(b []byte) { body = bytes.Clone(b) })
	return body, err
}

// RenderTo is Render giving the body to use, which may keep it only
// during the call: it is a render buffer, which the next template reuses.
// os-apply-config stages each body as it comes; a copy of each was a
// tenth of what a first render allocates (its heap's first faults).
func (m *Metadata) RenderTo(ctx context.Context, s *Source, use func(body []byte)) error {
	if s.executable {
		body, err := m.execute(ctx, s.path)
		if err != nil {
			return err
		}
		use(body)
		return nil
	}
	if s.err != nil {
		return &Error{Msg: "could not render moustache template " + s.path, Detail: pyerr.ErrorString(s.err, s.path)}
	}
	s.Compile()
	if err := m.renderCompiledTo(s.compiled, s.hexText, s.compileErr, use); err != nil {
		return &Error{Msg: "could not render moustache template " + s.path, Detail: err.Error()}
	}
	return nil
}

// Mustache renders template text. Like Python's text-mode read, it wants
// UTF-8 and reads "\r\n" and "\r" as "\n".
func (m *Metadata) Mustache(text []byte) ([]byte, error) {
	tmpl, err := compile(text)
	var hexText []byte
	if bytes.Contains(text, []byte("0x")) {
		hexText = text
	}
	return m.renderCompiled(tmpl, hexText, err)
}

// compile checks and parses template text; text must not change while
// the template lives (its string shares text's bytes).
func compile(text []byte) (*mustache.Template, error) {
	if msg, bad := pyutf8.DecodeError(text); bad {
		return nil, errors.New(msg)
	}
	src := universalNewlines(unsafe.String(unsafe.SliceData(text), len(text)))
	marked, alike := matchPystacheStandalone(src)
	if !alike {
		if err := checkTags(src); err != nil {
			return nil, err
		}
	}
	src = marked
	// An empty provider makes every partial render empty, as in pystache
	// with no search dirs.
	tmpl, err := mustache.ParseStringPartialsRaw(src, &mustache.StaticProvider{}, true)
	if err != nil {
		return nil, oneLine{parseError(src, err)}
	}
	return tmpl, nil
}

// renderCompiled renders a compiled template, or returns compile's error.
// hexText is the template's text if it holds "0x" (see output.text).
func (m *Metadata) renderCompiled(tmpl *mustache.Template, hexText []byte, err error) ([]byte, error) {
	var body []byte
	// The body is kept: its exact size, not the buffer's doubled capacity.
	err = m.renderCompiledTo(tmpl, hexText, err, func(b []byte) { body = bytes.Clone(b) })
	return body, err
}

// renderCompiledTo renders tmpl and gives use the body, valid during the
// call.
func (m *Metadata) renderCompiledTo(tmpl *mustache.Template, hexText []byte, err error, use func([]byte)) error {
	if err != nil {
		return err
	}
	out := outputs.Get().(*output)
	defer outputs.Put(out)
	out.vb, out.text, out.clash = m.vb, hexText, false
	out.buf.Reset()
	view := m.view
	if m.lazy != nil {
		view = m.lazy.context(tmpl)
	}
	if err := tmpl.FRender(out, view); err != nil {
		return oneLine{err}
	}
	if out.clash {
		// The text holds a cell's address: render with new cells, m's
		// kept alive meanwhile so that none has the same address.
		err := NewMetadata(m.cfg).renderCompiledTo(tmpl, hexText, nil, use)
		runtime.KeepAlive(m)
		return err
	}
	use(out.buf.Bytes())
	return nil
}

// outputs are the render buffers, reused from template to template.
var outputs = sync.Pool{New: func() any { return new(output) }}

// oneLine keeps an error on one log line: the names of tags it quotes
// may hold line breaks ("{{#a\nb}}").
type oneLine struct{ err error }

var lineBreaks = strings.NewReplacer("\n", `\n`, "\r", `\r`)

func (e oneLine) Error() string { return lineBreaks.Replace(e.err.Error()) }
func (e oneLine) Unwrap() error { return e.err }

func universalNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// parseError words a mismatched or stray closing tag as pystache does,
// "Section end tag mismatch: closing != open" (open is None at top level);
// other parse errors keep the library's wording.
func parseError(src string, err error) error {
	var pe mustache.ParseError
	if errors.As(err, &pe) && (pe.Code == mustache.ErrInterleavedClosingTag || pe.Code == mustache.ErrUnmatchedCloseTag) {
		if closing, open, ok := firstMismatch(src); ok {
			return fmt.Errorf("Section end tag mismatch: %s != %s", closing, open)
		}
	}
	return err
}

// readTemplate reads a template, or reports that it is an executable one
// (a regular file the running user may execute, as os.access(X_OK) says).
// Plain system calls keep it to open, fstat, read and close: this runs for
// every template of every refresh.
func readTemplate(path string) (data []byte, executable bool, err error) {
	// O_NONBLOCK: a FIFO in the template tree must not block the run
	// forever (as it did the reference's); regular files do not mind.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.EACCES) {
			// Unreadable, but perhaps executable (mode 0111 for a user).
			return nil, unix.Access(path, unix.X_OK) == nil && isRegular(path), err
		}
		return nil, false, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Mode&0o111 != 0 && unix.Access(path, unix.X_OK) == nil {
		return nil, true, nil
	}
	data, err = ReadFD(fd, st.Size)
	return data, false, err
}

// ReadFD reads an open regular file of size bytes (its fstat) to its end,
// in as many reads as it takes: one when fstat was right, since a
// regular file's read stops short only at its end, and a read more to
// see it costs as much as this one.
func ReadFD(fd int, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		data = data[:len(data)+n]
		if n == 0 || len(data) == int(size) {
			return data, nil
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

func isRegular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// execute runs an executable template with the metadata on stdin.
func (m *Metadata) execute(ctx context.Context, path string) ([]byte, error) {
	m.execMu.Lock()
	defer m.execMu.Unlock()
	stdout, stderr := proc.NewCapture(m.maxOutput, 0), proc.NewCapture(m.maxOutput, 0)
	res, err := proc.Run(ctx, proc.Spec{Path: path, Stdin: bytes.NewReader(m.stdin()), Stdout: stdout, Stderr: stderr,
		Timeout: m.timeout, Grace: execGrace})
	switch {
	case res.TimedOut:
		return nil, &Error{Msg: fmt.Sprintf("config script timed out after %s: %s", m.timeout, path)}
	case err != nil && res.Signal == 0 && res.ExitCode <= 0:
		return nil, &Error{Msg: fmt.Sprintf("config script could not be run: %s: %s", path, pyerr.ErrorString(err, path))}
	case res.Returncode() != 0:
		out := append(stdout.Bytes(), stderr.Bytes()...)
		return nil, &Error{Msg: fmt.Sprintf("config script failed: %s\n\nwith output:\n\n%s", path, jsondoc.PyReprBytes(out))}
	case stdout.Dropped() > 0:
		return nil, &Error{Msg: fmt.Sprintf("config script wrote more than %d bytes: %s", m.maxOutput, path)}
	}
	if msg, bad := pyutf8.DecodeError(stdout.Bytes()); bad {
		return nil, &Error{Msg: fmt.Sprintf("config script wrote output that is not UTF-8: %s: %s", path, msg)}
	}
	return stdout.Bytes(), nil
}
