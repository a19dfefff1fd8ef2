package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// However a secret is printed, logged or marshalled, its value stays out.
func TestStringNeverPrints(t *testing.T) {
	s := String("hunter2")
	holder := struct {
		Password String
		Name     string
	}{s, "x"}
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	log.Info("msg", "password", s, "holder", holder)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("msg", "password", s)
	marshalled, err := json.Marshal(holder)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{
		fmt.Sprint(s), fmt.Sprintf("%s %v %q %x %X %+v %#v", s, s, s, s, s, s, s),
		fmt.Sprintf("%v %+v %#v", holder, holder, holder), logged.String(), string(marshalled),
	} {
		if strings.Contains(out, "hunter2") || strings.Contains(out, "68756e74657232") {
			t.Errorf("the secret printed: %s", out)
		}
	}
	if s.Reveal() != "hunter2" {
		t.Fatal("Reveal lost the value")
	}
}

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://u:pw@swift:8080/v1/AUTH_x/c/o?temp_url_sig=abc&temp_url_expires=1#f", "https://swift:8080/v1/AUTH_x/c/o"},
		{"http://cfn:8000/v1/signal/arn?Signature=s&AWSAccessKeyId=k", "http://cfn:8000/v1/signal/arn"},
		{"http://[::1", "(unparseable URL)"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSensitiveName(t *testing.T) {
	for name, want := range map[string]bool{
		"deploy_password": true, "secret_access_key": true, "os_auth_token": true, "DB_Password": true,
		"deploy_signal_id": false, "access_key_id": false, "greeting": false, "deploy_user_id": false,
	} {
		if got := SensitiveName(name); got != want {
			t.Errorf("SensitiveName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor("s3cr3t-pw", "abc", "")
	got := r.Redact("password=s3cr3t-pw abc s3cr3t-pw")
	if want := "password=*** abc ***"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	var none *Redactor
	if none.Redact("x") != "x" {
		t.Error("a nil Redactor changed the text")
	}
}
