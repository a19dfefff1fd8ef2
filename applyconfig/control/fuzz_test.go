package control

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// oacSeeds are control files: every key, the YAML 1.1 forms of a mode,
// names and ids, the refused values and documents.
var oacSeeds = []string{
	"mode: 0644\nowner: root\ngroup: root\nallow_empty: false\n",
	"mode: 0755\nowner: 0\ngroup: 0\n",
	"mode: 0x1a4\n", "mode: 0b110100100\n", "mode: 0_644\n", "mode: 7:00\n", "mode: 420\n", "mode: +0600\n",
	"mode: 644\n", "mode: -1\n", "mode: 01000\n", "mode: 0o644\n", "mode: '0600'\n", "mode: !!str 0644\n",
	"mode: 1.5\n", "mode: yes\n", "mode: ~\n", "mode: [1, 2]\n", "mode: {a: 1}\n", "mode: 2001-12-14\n",
	"owner: nobody\ngroup: nogroup\n", "owner: nosuchuser\n", "owner: 4242\n", "owner: [a]\n", "owner: on\n", "owner: -5\n",
	"allow_empty: no\n", "allow_empty: off\n", "allow_empty: 'false'\n", "allow_empty: n\n", "allow_empty: 0\n",
	"", "# comment\n", "false\n", "- a\n- b\n", "hello\n", "mode: [0644\n", "{}\n", "[]\n",
	"mode: 0600\nmode: 0640\n", "owner: nosuchuser\nmode: 644\n", "mode: &m 0600\ngroup: *m\n",
	"mode: !!int 0644\n", "mode: !!float 1\n", "---\nmode: 0600\n...\n",
}

// FuzzControl reads a control file. A refused one is a one-line error;
// an accepted one gives a mode within 0777 and, written back as YAML
// (mode in octal, owner and group as ids), reads back the same.
func FuzzControl(f *testing.F) {
	for _, s := range oacSeeds {
		f.Add([]byte(s))
	}
	ref := difftest.FuzzReference(f, "testdata/oracle.py", "os_apply_config.oac_file")
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, fakeAccounts{})
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
		} else {
			if c.Mode > 0o777 {
				t.Fatalf("mode %#o out of range", c.Mode)
			}
			back, err := Parse([]byte(writeBack(c)), fakeAccounts{})
			if err != nil || back != c {
				t.Fatalf("%+v written as %q reads back as %+v, %v", c, writeBack(c), back, err)
			}
		}
		if ref != nil {
			checkControl(t, ref, data)
		}
	})
}

// writeBack is a control file for c.
func writeBack(c Control) string {
	var b strings.Builder
	if c.Mode != 0 {
		fmt.Fprintf(&b, "mode: 0%o\n", c.Mode)
	}
	if c.Owner >= 0 {
		fmt.Fprintf(&b, "owner: %d\n", c.Owner)
	}
	if c.Group >= 0 {
		fmt.Fprintf(&b, "group: %d\n", c.Group)
	}
	if !c.AllowEmpty {
		b.WriteString("allow_empty: false\n")
	}
	return b.String()
}

// modeSpellings are the ways YAML 1.1 (PyYAML) writes the integer m.
func modeSpellings(m int64) []string {
	o := strconv.FormatInt(m, 8)
	out := []string{
		"0" + o, "+0" + o, "0x" + strconv.FormatInt(m, 16), "0X" + strconv.FormatInt(m, 16),
		"0b" + strconv.FormatInt(m, 2), strconv.FormatInt(m, 10), "!!int " + strconv.FormatInt(m, 10),
	}
	if len(o) > 1 {
		out = append(out, "0"+o[:1]+"_"+o[1:]) // underscores between digits
	}
	if m >= 60 && m%60 < 60 {
		out = append(out, fmt.Sprintf("%d:%02d", m/60, m%60)) // sexagesimal
	}
	return out
}

// FuzzModeValues writes a mode in each YAML 1.1 spelling: within 0777 it
// reads back as the same mode, beyond it is refused with an error that
// names the value in octal, as the reference does.
func FuzzModeValues(f *testing.F) {
	for _, m := range []int64{0, 1, 0o600, 0o644, 0o755, 0o777, 0o1000, 0o4755, 60, 3599, math.MaxInt32} {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, m int64) {
		if m < 0 {
			m = -m
		}
		if m < 0 {
			return
		}
		for _, s := range modeSpellings(m) {
			if strings.HasPrefix(s, "0X") {
				continue // a string to YAML 1.1: only 0x is hex
			}
			c, err := Parse([]byte("mode: "+s+"\n"), fakeAccounts{})
			switch {
			case m <= 0o777 && (err != nil || int64(c.Mode) != m):
				t.Fatalf("mode: %s read as %#o, %v; want %#o", s, c.Mode, err, m)
			case m > 0o777 && (err == nil || err.Error() != fmt.Sprintf("mode '0o%o' out of range", m)):
				t.Fatalf("mode: %s: error %v, want it out of range", s, err)
			}
		}
	})
}

// The reference's yaml.safe_load and OacFile over the seeds (checkControl).
func TestControlSeedsAgainstReference(t *testing.T) {
	ref := difftest.StartReference(t, "testdata/oracle.py", "os_apply_config.oac_file")
	n := 0
	for _, s := range oacSeeds {
		n += checkControl(t, ref, []byte(s))
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzControl") {
		n += checkControl(t, ref, vals[0].([]byte))
	}
	t.Logf("%d control files compared", n)
}

// checkControl reads data here, with the system's accounts, and in the
// reference: the same mode, owner, group and allow_empty, or the same
// error words; a YAML syntax error is an error here too (a traceback
// there, documented). It returns 0 for a known difference (see
// testdata/oracle.py), else 1.
func checkControl(t *testing.T, ref *difftest.Reference, data []byte) int {
	t.Helper()
	var want controlAnswer
	if !ref.Query(t, map[string]string{"oac": base64.StdEncoding.EncodeToString(data)}, &want) || want.Skip != "" {
		return 0
	}
	got, err := Parse(data, SystemAccounts{})
	switch {
	case want.YAMLError:
		// Tabs where PyYAML wants spaces are read as spaces (documented).
		if d := want.Detabbed; err == nil && (d == nil || !d.same(got)) {
			t.Errorf("%q: PyYAML refuses it, we read %+v", data, got)
		}
	case want.Error != "":
		// Where yaml.v3 is stricter than PyYAML ("[!,]") both refuse,
		// in other words.
		if err == nil || err.Error() != lineBreaks.Replace(want.Error) && !strings.HasPrefix(err.Error(), "invalid YAML: ") {
			t.Errorf("%q: error %v, the reference: %s", data, err, want.Error)
		}
	case err != nil:
		t.Errorf("%q: refused (%v), the reference reads it", data, err)
	case !want.same(got):
		t.Errorf("%q: ours %+v, the reference %+v", data, got, want)
	}
	return 1
}

// controlAnswer is testdata/oracle.py's answer.
type controlAnswer struct {
	Mode, Owner, Group *int64
	AllowEmpty         *bool `json:"allow_empty"`
	Error              string
	YAMLError          bool           `json:"yaml_error"`
	Detabbed           *controlAnswer `json:"detabbed"`
	Skip               string
}

// same reports whether the reference accepted the file as c.
func (a *controlAnswer) same(c Control) bool {
	orNeg := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	if a.AllowEmpty == nil {
		return false // refused, or skipped
	}
	return int64(c.Mode) == max(orNeg(a.Mode), 0) && int64(c.Owner) == orNeg(a.Owner) &&
		int64(c.Group) == orNeg(a.Group) && c.AllowEmpty == *a.AllowEmpty
}
