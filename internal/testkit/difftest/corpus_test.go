package difftest

import (
	"reflect"
	"testing"
)

func TestParseCorpusFile(t *testing.T) {
	got, err := ParseCorpusFile([]byte("go test fuzz v1\n[]byte(\"a\\x00\\\"b\")\nstring(\"é\")\nint(-3)\nbool(true)\nuint8(255)\nbyte('x')\nfloat64(1.5)\nint64(0x10)\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{[]byte("a\x00\"b"), "é", -3, true, uint8(255), uint8('x'), 1.5, int64(16)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	for _, bad := range []string{"", "go test fuzz v2\n", "go test fuzz v1\nfoo\n", "go test fuzz v1\nstring(x)\n", "go test fuzz v1\nchan(1)\n"} {
		if _, err := ParseCorpusFile([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
