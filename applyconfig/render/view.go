package render

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// The reference renders with pystache and a JSON string coercion; this
// package renders with github.com/cbroglie/mustache. The library decides
// three things by reflection on the values it is given: truthiness (its
// isEmpty), what a variable prints (fmt.Fprint) and how names are looked up
// (exported zero-argument methods first, then map keys). The view types
// below are chosen so those decisions come out as pystache's:
//
//   - Python truthiness: empty dicts and lists, "", 0, 0.0, -0.0, false and
//     null are falsy; everything else, whitespace-only strings included, is
//     truthy. The library calls a map truthy when non-nil, a slice when
//     non-empty, a string when it has non-space text, anything else when it
//     is not the zero value of its type.
//   - Speed: the library scans the methods of every context it looks a
//     name up in, and reflect makes that scan costly. So the types that
//     become contexts (dicts, and truthy values pushed by a section) have no
//     methods, and print correctly through plain fmt: bool prints
//     true/false, a number is its Python text in a string kind.
//   - Dicts are pointers to pointers to maps (cells), which fmt prints as
//     their address: printing a map would sort and print all its entries
//     only for the writer to throw the text away. The writer that receives
//     the library's output replaces the address of a cell by json.dumps of
//     its dict (made once per dict). A metadata string that could read as
//     an address ("0x...") is a hexString, which prints marked; a template
//     whose text holds the address is rendered again with other cells.
//   - Each dict also holds, under the key "", a ref whose Format writes a
//     sentinel with the dict's number, which the writer drops: template
//     names reach the "" entry only through the malformed "a." form; a
//     metadata key "" cannot be looked up in templates (pystache could,
//     through "a."). The top level of lazily read metadata is printed as
//     a map (lazy.go): the writer replaces one that starts with the
//     sentinel.
//   - Lists print their JSON, made once per list: it is kept past the
//     list's end, in a slot of its backing array that the library (which
//     goes by the length) never sees.
//   - Falsy values (never pushed as contexts) print through Format methods.

// dict is a non-empty JSON object: its view entries plus the ref under "".
// The view holds a cell (see above).
type dict map[string]any

// cell is what the view holds for a dict.
type cell = **dict

const refKey = ""

// ref stands for a dict when fmt prints it; see above.
type ref struct {
	id    int
	nonce string
	obj   *jsondoc.Object
}

func (r ref) Format(f fmt.State, _ rune) {
	io.WriteString(f, r.nonce)
	io.WriteString(f, strconv.Itoa(r.id))
	io.WriteString(f, sentinelEnd)
}

const sentinelEnd = "\x00"

// emptyDict is {}: a nil map, falsy.
type emptyDict map[string]any

// list is a JSON array; its backing array holds a *listInfo past its end.
type list []any

// listInfo is a list's JSON value and, once printed, its text.
type listInfo struct {
	arr  []jsondoc.Value
	once sync.Once
	text string
}

func (l list) info() *listInfo { return l[:len(l)+1][len(l)].(*listInfo) }

// dictEntry is a dict's JSON value and its json.dumps, made the first
// time it is printed.
type dictEntry struct {
	obj  *jsondoc.Object
	once sync.Once
	text string
}

// number is a non-zero JSON number, as its Python text.
type number string

// zeroInt, zeroFloat and negZeroFloat are the falsy numbers 0, 0.0, -0.0.
type (
	zeroInt      int
	zeroFloat    int
	negZeroFloat int
)

// null is JSON null: falsy, prints nothing.
type null struct{}

// hexString is a string that starts with "0x": printed bare it could
// read as a cell's address. It prints marked (nonce + "s" + text), and the
// writer drops the mark; its text is under blankKey, as blankString's.
type hexString map[string]any

// blankString is a non-empty string of only white space, truthy in Python
// (the library would call it empty). Its text is under blankKey: the
// library answers the name "." with the context itself and splits any
// other name with a dot, so no lookup reaches it.
type blankString map[string]any

const blankKey = "."

// viewBuilder converts decoded JSON to the types above and numbers dicts.
type viewBuilder struct {
	nonce string // "\x00dict-<random>-": cannot occur in templates or metadata by chance
	// dicts grows while templates render when the view is made as they
	// look into it (lazy.go).
	mu    sync.Mutex
	dicts []*dictEntry
	// cells maps the address of each cell made to its dict's number.
	cells map[uintptr]int
}

// newCell numbers a dict and makes its cell.
func (vb *viewBuilder) newCell(d *dict, id int) cell {
	c := new(*dict)
	*c = d
	vb.mu.Lock()
	vb.cells[uintptr(unsafe.Pointer(c))] = id
	vb.mu.Unlock()
	return c
}

// cellDict is the number of the dict whose cell's address is printed in
// p ("0x" and lowercase hex, as fmt prints a pointer), or -1.
func (vb *viewBuilder) cellDict(p []byte) int {
	if len(p) < 3 || len(p) > 18 || p[0] != '0' || p[1] != 'x' {
		return -1
	}
	var u uintptr
	for _, c := range p[2:] {
		switch {
		case '0' <= c && c <= '9':
			u = u<<4 | uintptr(c-'0')
		case 'a' <= c && c <= 'f':
			u = u<<4 | uintptr(c-'a'+10)
		default:
			return -1
		}
	}
	vb.mu.Lock()
	defer vb.mu.Unlock()
	if id, ok := vb.cells[u]; ok {
		return id
	}
	return -1
}

// addDict numbers a dict.
func (vb *viewBuilder) addDict(x *jsondoc.Object) int {
	vb.mu.Lock()
	defer vb.mu.Unlock()
	vb.dicts = append(vb.dicts, &dictEntry{obj: x})
	return len(vb.dicts) - 1
}

// dict is dict number id, or nil.
func (vb *viewBuilder) dict(id int) *dictEntry {
	vb.mu.Lock()
	defer vb.mu.Unlock()
	if id < 0 || id >= len(vb.dicts) {
		return nil
	}
	return vb.dicts[id]
}

func newViewBuilder() *viewBuilder {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &viewBuilder{nonce: "\x00dict-" + hex.EncodeToString(b) + "-", cells: make(map[uintptr]int)}
}

func (vb *viewBuilder) view(v jsondoc.Value) any {
	switch x := v.(type) {
	case *jsondoc.Object:
		if x.Len() == 0 {
			return emptyDict(nil)
		}
		d := make(dict, x.Len()+1)
		for i := 0; i < x.Len(); i++ {
			k, item := x.At(i)
			if k != refKey {
				d[k] = vb.view(item)
			}
		}
		id := vb.addDict(x)
		d[refKey] = ref{id: id, nonce: vb.nonce, obj: x}
		return vb.newCell(&d, id)
	case []jsondoc.Value:
		l := make(list, len(x), len(x)+1)
		for i, item := range x {
			l[i] = vb.view(item)
		}
		l[:len(x)+1][len(x)] = &listInfo{arr: x}
		return l
	case string:
		if x != "" && strings.TrimSpace(x) == "" {
			return blankString{blankKey: x}
		}
		if strings.HasPrefix(x, "0x") {
			return hexString{blankKey: vb.nonce + "s" + x}
		}
		return x
	case jsondoc.Number:
		switch {
		case !x.IsZero():
			return number(x.Text)
		case !x.IsFloat:
			return zeroInt(0)
		case x.Text == "-0.0":
			return negZeroFloat(0)
		default:
			return zeroFloat(0)
		}
	case bool:
		return x
	case nil:
		return null{}
	case *jsondoc.Raw:
		return vb.view(jsondoc.Materialized(x))
	}
	panic(fmt.Sprintf("render: unexpected metadata value %T", v))
}

// output receives what the library renders and turns printed dicts into
// their JSON (see the comment at the top).
type output struct {
	buf bytes.Buffer
	vb  *viewBuilder
	// text is the template's text if it holds "0x": a text the library
	// writes could then be a cell's address, which text wins.
	text []byte
	// clash is set when it did: the template renders again (render.go).
	clash bool
}

func (o *output) Write(p []byte) (int, error) {
	if bytes.IndexByte(p, 0) < 0 { // the common case: no sentinel
		if id := o.vb.cellDict(p); id >= 0 {
			if o.text != nil && bytes.Contains(o.text, p) {
				o.clash = true
			}
			o.buf.WriteString(o.vb.dictText(id))
			return len(p), nil
		}
		return o.buf.Write(p)
	}
	if m := o.vb.nonce + "s"; bytes.HasPrefix(p, []byte(m)) { // a hexString
		return o.buf.Write(p[len(m):])
	}
	if i := bytes.Index(p, []byte(o.vb.nonce)); i >= 0 && (i == 0 || bytes.HasPrefix(p, []byte("&map[:"))) {
		rest := p[i+len(o.vb.nonce):]
		if end := bytes.IndexByte(rest, 0); end > 0 {
			if id, err := strconv.Atoi(string(rest[:end])); err == nil && o.vb.dict(id) != nil {
				if i > 0 { // a printed dict; a bare ref (from "a.") prints nothing
					o.buf.WriteString(o.vb.dictText(id))
				}
				return len(p), nil
			}
		}
	}
	return o.buf.Write(p)
}

// dictText is json.dumps of dict number id; workers share it.
func (vb *viewBuilder) dictText(id int) string {
	t := vb.dict(id)
	t.once.Do(func() { t.text = jsondoc.Dumps(t.obj) })
	return t.text
}

// The falsy types and the rarely-context ones print through Format.
func (l list) Format(f fmt.State, _ rune) {
	info := l.info()
	info.once.Do(func() { info.text = jsondoc.Dumps(info.arr) })
	io.WriteString(f, info.text)
}
func (emptyDict) Format(f fmt.State, _ rune)     { io.WriteString(f, "{}") }
func (zeroInt) Format(f fmt.State, _ rune)       { io.WriteString(f, "0") }
func (zeroFloat) Format(f fmt.State, _ rune)     { io.WriteString(f, "0.0") }
func (negZeroFloat) Format(f fmt.State, _ rune)  { io.WriteString(f, "-0.0") }
func (null) Format(fmt.State, rune)              {}
func (s blankString) Format(f fmt.State, _ rune) { io.WriteString(f, s[blankKey].(string)) }
func (s hexString) Format(f fmt.State, _ rune)   { io.WriteString(f, s[blankKey].(string)) }
