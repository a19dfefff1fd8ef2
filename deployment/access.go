package deployment

import (
	"bufio"
	"io"
	"strings"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/secret"
)

// Object is the document itself; changes to it are changes to the
// deployment.
func (d *Deployment) Object() *jsondoc.Object { return d.obj }

// ID is the derived config's id, heat-config's key for "already deployed".
func (d *Deployment) ID() string { s, _ := str(d.obj, "id"); return s }

// Name is the deployment's name ("" when absent).
func (d *Deployment) Name() string { s, _ := str(d.obj, "name"); return s }

// Group selects the hook.
func (d *Deployment) Group() string { s, _ := str(d.obj, "group"); return s }

// CreationTime is the derived config's creation time, as Heat wrote it.
func (d *Deployment) CreationTime() string { s, _ := str(d.obj, "creation_time"); return s }

// Config is the config: a string for SoftwareConfig, any JSON for a
// StructuredConfig; nil when absent or null. One read by ListOwned or
// Load is decoded here, at the first look, and kept.
func (d *Deployment) Config() jsondoc.Value {
	v, _ := d.obj.Get("config")
	if r, ok := v.(*jsondoc.Raw); ok {
		v = r.Decode()
		d.obj.Set("config", v)
	}
	return v
}

// ConfigString is the config as text: a string as it is, null or absent
// as "", anything else as JSON.
func (d *Deployment) ConfigString() string {
	switch v := d.Config().(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return jsondoc.Dumps(v)
	}
}

// Inputs are the inputs, in order.
func (d *Deployment) Inputs() []Input {
	v, _ := d.obj.Get("inputs")
	list, _ := v.([]jsondoc.Value)
	out := make([]Input, 0, len(list))
	for _, item := range list {
		o := item.(*jsondoc.Object)
		in := Input{}
		in.Name, _ = str(o, "name")
		in.Type, _ = str(o, "type")
		in.Value, in.HasValue = o.Get("value")
		out = append(out, in)
	}
	return out
}

// Input is the value of the last input called name (a later input wins,
// as in the reference's dict of inputs).
func (d *Deployment) Input(name string) (jsondoc.Value, bool) {
	var val jsondoc.Value
	found := false
	for _, in := range d.Inputs() {
		if in.Name == name {
			val, found = in.Value, true
		}
	}
	return val, found
}

// InputString is the value of input name when it is a string.
func (d *Deployment) InputString(name string) (string, bool) {
	v, ok := d.Input(name)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// Outputs are the declared outputs, in order; entries without a string
// name are left out.
func (d *Deployment) Outputs() []Output {
	v, _ := d.obj.Get("outputs")
	list, _ := v.([]jsondoc.Value)
	var out []Output
	for _, item := range list {
		o, ok := item.(*jsondoc.Object)
		if !ok {
			continue
		}
		name, ok := str(o, "name")
		if !ok {
			continue
		}
		typ, _ := str(o, "type")
		eo, _ := o.Get("error_output")
		out = append(out, Output{Name: name, Type: typ, ErrorOutput: jsondoc.PyTruthy(eo)})
	}
	return out
}

// Option is the value of options[name]. Null or absent options count as
// empty (the reference's hooks crashed on null).
func (d *Deployment) Option(name string) (jsondoc.Value, bool) {
	v, _ := d.obj.Get("options")
	o, ok := v.(*jsondoc.Object)
	if !ok {
		return nil, false
	}
	return o.Get(name)
}

// OptionString is options[name] as a string: "" when absent or null, a
// string as it is, anything else as Python's str().
func (d *Deployment) OptionString(name string) string {
	v, ok := d.Option(name)
	if !ok || v == nil {
		return ""
	}
	return jsondoc.PyStr(v)
}

// OptionBool is options[name] as Python's truth, def when absent.
func (d *Deployment) OptionBool(name string, def bool) bool {
	v, ok := d.Option(name)
	if !ok {
		return def
	}
	return jsondoc.PyTruthy(v)
}

// JSON is the document as Python's json.dumps(c) writes it (what a hook
// reads on stdin).
func (d *Deployment) JSON() string { return jsondoc.Dumps(d.obj) }

// Indented is the document as json.dump(c, indent=2, separators=(',',
// ': ')) writes it (heat-config's state file).
func (d *Deployment) Indented() string { return jsondoc.DumpsIndent(d.obj, 2) }

// WriteIndented writes Indented to w, never holding it whole.
func (d *Deployment) WriteIndented(w io.Writer) error {
	return jsondoc.WriteIndent(bufio.NewWriterSize(w, 64<<10), d.obj, 2)
}

// WriteJSON writes JSON to w, never holding it whole.
func (d *Deployment) WriteJSON(w io.Writer) error {
	return jsondoc.Write(bufio.NewWriterSize(w, 64<<10), d.obj)
}

// Redactor hides the deployment's credentials in text that may echo
// them (a hook's or a tool's output): the values of inputs whose names
// carry a credential, and the signal URL, whole and by its query (the
// signature), which a tool may print apart.
func (d *Deployment) Redactor() *secret.Redactor {
	var values []string
	for _, in := range d.Inputs() {
		s, ok := in.Value.(string)
		if !ok {
			continue
		}
		if secret.SensitiveName(in.Name) {
			values = append(values, s)
		}
		if strings.HasSuffix(in.Name, "deploy_signal_id") {
			values = append(values, s)
			if _, query, ok := strings.Cut(s, "?"); ok {
				values = append(values, query)
			}
		}
	}
	return secret.NewRedactor(values...)
}
