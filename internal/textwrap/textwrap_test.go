package textwrap

import (
	"reflect"
	"testing"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		words []string
		width int
		want  []string
	}{
		{nil, 10, nil},
		{[]string{"a", "bb", "ccc"}, 6, []string{"a bb", "ccc"}},
		{[]string{"a", "bb", "ccc"}, 8, []string{"a bb ccc"}},
		{[]string{"longerthanwidth", "x"}, 5, []string{"longerthanwidth", "x"}},
	} {
		if got := Words(tc.words, tc.width); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Words(%q, %d) = %q, want %q", tc.words, tc.width, got, tc.want)
		}
	}
}
