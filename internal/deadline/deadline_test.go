package deadline

import (
	"strings"
	"testing"
	"time"
)

// Unset or blank is the default; a positive number of seconds, fractions
// and surrounding spaces allowed, is taken; anything else is an error
// naming the variable and the value.
func TestHook(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"", DefaultHook, false},
		{"  ", DefaultHook, false},
		{"0.3", 300 * time.Millisecond, false},
		{" 120 ", 2 * time.Minute, false},
		{"14400", 4 * time.Hour, false},
		{"soon", DefaultHook, true},
		{"0", DefaultHook, true},
		{"-5", DefaultHook, true},
		{"NaN", DefaultHook, true},
		{"inf", DefaultHook, true},
		{"1e300", DefaultHook, true},
	} {
		env := []string{"PATH=/bin"}
		if tc.value != "" {
			env = append(env, HookVar+"="+tc.value)
		}
		got, err := Hook(env)
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("%q: %v, %v; want %v, error %v", tc.value, got, err, tc.want, tc.bad)
		}
		if err != nil && !strings.Contains(err.Error(), HookVar+`="`+tc.value+`"`) {
			t.Errorf("%q: error %q does not name the variable and value", tc.value, err)
		}
	}
	if got, err := Hook(nil); got != DefaultHook || err != nil {
		t.Errorf("unset: %v, %v", got, err)
	}
}

// The outer deadline is strictly past the hook's deadline and grace.
func TestOuter(t *testing.T) {
	for _, tc := range []struct{ hook, grace, want time.Duration }{
		{4 * time.Hour, 10 * time.Second, 4*time.Hour + 15*time.Second},
		{300 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond},
	} {
		if got := Outer(tc.hook, tc.grace); got != tc.want || got <= tc.hook+tc.grace {
			t.Errorf("Outer(%v, %v) = %v, want %v", tc.hook, tc.grace, got, tc.want)
		}
	}
}

func TestForManual(t *testing.T) {
	for d, want := range map[time.Duration]string{
		DefaultHook:      "4 hours",
		time.Hour:        "1 hour",
		90 * time.Minute: "1h30m0s",
	} {
		if got := ForManual(d); got != want {
			t.Errorf("ForManual(%v) = %q, want %q", d, got, want)
		}
	}
}
