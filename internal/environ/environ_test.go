package environ

import (
	"slices"
	"testing"
)

func TestLookupWithoutWith(t *testing.T) {
	env := []string{"A=1", "AB=2", "B=", "A=3"}
	for _, tc := range []struct {
		name, want string
		set        bool
	}{{"A", "1", true}, {"AB", "2", true}, {"B", "", true}, {"C", "", false}} {
		if v, ok := Lookup(env, tc.name); v != tc.want || ok != tc.set {
			t.Errorf("Lookup(%s) = %q, %v", tc.name, v, ok)
		}
	}
	if got := Without(env, "A"); !slices.Equal(got, []string{"AB=2", "B="}) {
		t.Errorf("Without(A) = %q", got)
	}
	if got := With(env, "B", "x"); !slices.Equal(got, []string{"A=1", "AB=2", "A=3", "B=x"}) {
		t.Errorf("With(B, x) = %q", got)
	}
	if !slices.Equal(env, []string{"A=1", "AB=2", "B=", "A=3"}) {
		t.Errorf("env changed: %q", env)
	}
}
