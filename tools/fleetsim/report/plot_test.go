package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestCDFAndRate(t *testing.T) {
	c := CDF("x", []float64{3, 1, 2, 4})
	if len(c.X) != 4 || c.X[0] != 1 || c.X[3] != 4 || c.Y[1] != 50 || c.Y[3] != 100 {
		t.Fatalf("%+v", c)
	}
	r := Rate("r", []float64{10, 20}, 200, 1)
	if r.Y[0] != 50 || r.Y[1] != 100 || r.X[1] != 1 {
		t.Fatalf("%+v", r)
	}
}

func TestLinesWritesAPNG(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.png")
	series := []Series{{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}, {Name: "b", X: []float64{0, 2}, Y: []float64{3, 1}}}
	for _, draw := range []func(string, string, string, string, []Series) error{Lines, Panels} {
		if err := draw(p, "t", "x", "y", series); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("not a PNG (%v)", err)
		}
	}
}
