package heatconfig

import (
	"strings"
	"testing"
)

// A result object is kept whole to be parsed; other output only by its
// tail, from the first byte on.
func TestStdoutCapture(t *testing.T) {
	big := strings.Repeat("x", outputTail+10)
	for _, tc := range []struct {
		name      string
		writes    []string
		want      string
		truncated bool
	}{
		{"an object", []string{`{"a": `, `1}`}, `{"a": 1}`, false},
		{"an object after blanks", []string{"\n ", "\t{}"}, "\n \t{}", false},
		{"text", []string{"hello ", "{not json}"}, "hello {not json}", false},
		{"nothing", nil, "", false},
		{"long text keeps its tail", []string{big, "END"}, "[... 13 bytes dropped ...]\n" + big[13:] + "END", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newStdoutCapture()
			for _, w := range tc.writes {
				c.Write([]byte(w))
			}
			got, truncated := c.result()
			if string(got) != tc.want || truncated != tc.truncated {
				t.Errorf("got %.60q... (%d bytes, truncated %v), want %.60q... (%d bytes, truncated %v)",
					got, len(got), truncated, tc.want, len(tc.want), tc.truncated)
			}
		})
	}
}
