package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scanner itself, without the lab: it knows a server's secrets from
// its metadata (sensitive keys, inputs by name, signed URLs' signatures),
// finds them in every form they take in text, and skips private files.
func TestSecretScanner(t *testing.T) {
	var md map[string]any
	err := json.Unmarshal([]byte(`{
	 "os-collect-config": {"heat": {"password": "heat-pass-w0rd", "user_id": "u1"},
	  "request": {"metadata_url": "http://swift/v1/AUTH_x/c/o?temp_url_sig=0123abcdef0123&temp_url_expires=2000000000"},
	  "cfn": {"secret_access_key": "cfn-s3cret-key", "access_key_id": "AKID1234"}},
	 "deployments": [{"inputs": [
	  {"name": "deploy_password", "value": "deploy-Pa55word"},
	  {"name": "deploy_signal_id", "value": "http://cfn/v1/signal/arn?AWSAccessKeyId=AKID&SignatureMethod=HmacSHA256&Signature=v1Ja6%2Bx%2FZz%3D"},
	  {"name": "greeting", "value": "hello world, not secret"}]}]}`), &md)
	if err != nil {
		t.Fatal(err)
	}
	s := &Secrets{forms: map[string]string{}}
	s.AddMetadata("st", md)
	if s.count != 5 {
		t.Errorf("%d secrets, want 5: %v", s.count, s.forms)
	}
	for text, want := range map[string]string{
		"password heat-pass-w0rd":                                    "password",
		"GET http://swift/v1/AUTH_x/c/o?temp_url_sig=0123abcdef0123": "temp_url_sig",
		`"deploy_password": "deploy-Pa55word"`:                       "deploy_password",
		"POST http://cfn/v1/signal/arn?Signature=v1Ja6%2Bx%2FZz%3D":  "Signature",
		"signature v1Ja6+x/Zz=":                                      "Signature",
		"X-Auth-Token: gAAAAABl" + strings.Repeat("x", 80):           keystoneToken,
		"Signaling to http://cfn/v1/signal/arn via POST":             "",
		"hello world, not secret; AKID1234; u1":                      "",
	} {
		hits := s.scan("text", []byte(text))
		got := ""
		if len(hits) > 0 {
			got = kindOf(hits[0].What)
		}
		if got != want || len(hits) > 1 {
			t.Errorf("%q: hits %v, want %q", text, hits, want)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "private"), []byte("heat-pass-w0rd"), 0o600)
	os.WriteFile(filepath.Join(dir, "public"), []byte("x\ndeploy-Pa55word\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "clean"), []byte("nothing"), 0o644)
	if hits := s.ScanTree(dir, nil); len(hits) != 1 || !strings.Contains(hits[0].Where, "public (0644)") {
		t.Errorf("tree hits %v", hits)
	}
	if hits := s.ScanLog(filepath.Join(dir, "public")); len(hits) != 1 || !strings.HasSuffix(hits[0].Where, "public:2") {
		t.Errorf("log hits %v", hits)
	}
	if st := s.stats; st.Files != 2 || st.Private != 1 || st.LogLines != 2 || st.Hits != 2 {
		t.Errorf("stats %+v", st)
	}
}
