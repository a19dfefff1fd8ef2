package applyconfig

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/tripleo-go/agent/applyconfig/control"
	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/applyconfig/render"
	"github.com/tripleo-go/agent/applyconfig/writer"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
)

// The main job: find every template, render them all, then write the
// files in one batch.

// template is one template file, where its output goes, and whether its
// directory lists a control file for it; once loaded, its source and
// control settings (or the error rendering it will report).
type template struct {
	in, out    string
	hasControl bool

	once   sync.Once
	src    *render.Source
	ctl    control.Control
	ctlErr *templateError
}

// load reads and compiles the template and reads its control file, once,
// by whichever comes first: the reader ahead or a render worker.
func (t *template) load(accounts control.Accounts) {
	t.once.Do(func() {
		t.src = render.Load(t.in)
		t.src.Compile()
		t.ctl, t.ctlErr = loadControl(t, accounts)
	})
}

// rendered is a template's outcome.
type rendered struct {
	err error // already worded as the reference logs it
	pre string
}

func install(ctx context.Context, o options, env Env, log *slog.Logger) error {
	// The template tree is listed, and templates are read and compiled,
	// while the metadata is parsed and its view made: before the render
	// the second core would have nothing to do.
	walked := make(chan []*template, 1)
	parsed := make(chan struct{})
	go func() {
		templates := walkTemplates(o.templates, o.output)
		walked <- templates
		for _, t := range templates {
			select {
			case <-parsed:
				return // the render workers load the rest
			default:
				t.load(env.Accounts)
			}
		}
	}()
	cfg, err := o.readMetadata()
	if err == nil {
		cfg, err = metadata.Subhash(cfg, o.subhash)
	}
	if err != nil {
		close(parsed)
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	md := render.NewMetadata(cfg)
	close(parsed)
	templates := <-walked
	// Each file is staged as soon as it is rendered, so that the disk
	// works while the other templates render; nothing is replaced before
	// all have rendered, and a render error takes back what was staged.
	var batch *writer.Batch
	if !o.validate {
		batch = writer.NewBatch(len(templates))
	}
	results := renderAll(ctx, md, templates, env.Accounts, batch)
	for _, r := range results {
		if r.err != nil {
			if batch != nil {
				batch.Abort()
			}
			if r.pre != "" {
				log.Error(r.pre)
			}
			log.Error(r.err.Error())
			return exitcode.With(exitcode.Failure, r.err)
		}
	}
	if o.validate {
		log.Info("success")
		return nil
	}
	applyLog, flush := log, func() {}
	if o.batchLog != nil {
		applyLog, flush = o.batchLog()
	}
	res, err := batch.Commit(applyLog)
	flush()
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	log.Info(fmt.Sprintf("%d files written, %d unchanged, %d deleted", len(res.Written), len(res.Unchanged), len(res.Deleted)))
	log.Info("success")
	return nil
}

// renderAll renders every template, in parallel, stages each rendered
// file in batch (unless it is nil), and returns the results in template
// order so the first error is the reference's first error. Workers take
// the next index from a counter: a channel hand-off per template cost a
// wake-up each.
func renderAll(ctx context.Context, md *render.Metadata, templates []*template, accounts control.Accounts, batch *writer.Batch) []rendered {
	results := make([]rendered, len(templates))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(templates) {
				return
			}
			var stage func(writer.File)
			if batch != nil {
				stage = func(f writer.File) { batch.Stage(i, f) }
			}
			results[i] = renderOne(ctx, md, templates[i], accounts, stage)
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(templates)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return results
}

// templateError is how the reference logs a failure tied to one template:
// the repr of the tuple (message, template path).
type templateError struct{ msg, path string }

func (e *templateError) Error() string { return jsondoc.PyReprTuple(e.msg, e.path) }

// renderOne renders t and gives its file to stage (nil: nothing is
// written), whose body is valid only during the call.
func renderOne(ctx context.Context, md *render.Metadata, t *template, accounts control.Accounts, stage func(writer.File)) rendered {
	t.load(accounts)
	err := md.RenderTo(ctx, t.src, func(body []byte) {
		if t.ctlErr == nil && stage != nil {
			ctl := t.ctl
			stage(writer.File{Path: t.out, Body: body, Mode: ctl.Mode, UID: ctl.Owner, GID: ctl.Group, AllowEmpty: ctl.AllowEmpty})
		}
	})
	t.src = nil // rendered: its text is garbage now
	if err != nil {
		var re *render.Error
		if errors.As(err, &re) {
			return rendered{err: &templateError{re.Msg, t.in}, pre: re.Detail}
		}
		return rendered{err: &templateError{err.Error(), t.in}}
	}
	if t.ctlErr != nil {
		return rendered{err: t.ctlErr}
	}
	return rendered{}
}

// loadControl reads and parses the template's control file, if it has one.
func loadControl(t *template, accounts control.Accounts) (control.Control, *templateError) {
	ctl := control.Default()
	ctlPath := t.in + control.Suffix
	if !t.hasControl {
		// No such name in the directory listing: no stat needed.
	} else if data, regular, err := readControl(ctlPath); err != nil {
		return ctl, &templateError{"could not read " + ctlPath + ": " + err.Error(), t.in}
	} else if regular {
		ctl, err = control.Parse(data, accounts)
		if err != nil {
			msg := err.Error()
			if msg == "header is not a dict" {
				msg += ": " + t.in
			}
			return ctl, &templateError{msg, t.in}
		}
	}
	return ctl, nil
}

// readControl reads a control file if it is a regular file (following
// links); what is not one, or is not there, is no control file. Open,
// fstat and read spare the stat before the open (a few hundred control
// files on each run); if the open fails, the stat decides as before.
func readControl(path string) (data []byte, regular bool, err error) {
	fd, openErr := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if openErr != nil {
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return nil, false, nil
		}
		return nil, true, &fs.PathError{Op: "open", Path: path, Err: openErr}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, nil
	}
	if data, err = render.ReadFD(fd, st.Size); err != nil {
		return nil, true, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return data, true, nil
}

// walkTemplates lists the templates under root as Python's os.walk does:
// hidden entries included, symlinks to files followed, symlinks to
// directories not descended into, control files skipped, unreadable
// directories silently left out. Names are sorted for a stable order.
func walkTemplates(root, output string) []*template {
	var out []*template
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := pypath.ScanDir(dir) // sorted by name
		if err != nil {
			return
		}
		names := make(map[string]bool, len(entries))
		for _, e := range entries {
			names[e.Name] = true
		}
		var subdirs []string
		for _, e := range entries {
			name := e.Name
			path := pypath.Join(dir, name)
			switch typ := e.Type; {
			case typ.IsDir():
				subdirs = append(subdirs, path)
				continue
			case typ&fs.ModeSymlink != 0 && pypath.IsDir(path):
				continue // os.walk lists it but does not follow it
			}
			if strings.HasSuffix(name, control.Suffix) {
				continue
			}
			rel := pypath.Join(strings.TrimPrefix(dir, root), name)
			out = append(out, &template{
				in:         path,
				out:        pypath.Join(output, strings.TrimPrefix(rel, "/")),
				hasControl: names[name+control.Suffix],
			})
		}
		for _, d := range subdirs {
			walk(d)
		}
	}
	walk(root)
	return out
}
