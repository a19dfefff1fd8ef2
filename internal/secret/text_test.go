package secret

import "testing"

// Credentials in free text go, whatever their form; what an operator
// needs to read (the endpoint, the key's name) stays.
func TestRedactText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Signaling to https://h:8000/v1/signal/x?Signature=abc%2Fdef&AWSAccessKeyId=k now",
			"Signaling to https://h:8000/v1/signal/x?*** now"},
		{"GET http://user:pw@swift/v1/AUTH_a/c/o?temp_url_sig=123&temp_url_expires=9", "GET http://***@swift/v1/AUTH_a/c/o?***"},
		{"password = hunter2", "password = ***"},
		{"http://h/o?sig=1&x=2: 503 (see http://h/p?a=b).", "http://h/o?***: 503 (see http://h/p?***)."},
		{`{"deploy_password": "s3cr3t", "name": "x"}`, `{"deploy_password": "***", "name": "x"}`},
		{"secret_access_key=AbCd/Ef+Gh", "secret_access_key=***"},
		{"X-Auth-Token: gAAAAABk123", "X-Auth-Token: ***"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload", "Authorization: Bearer ***"},
		{"Source [heat] Unavailable.", "Source [heat] Unavailable."},
		{"auth_url = http://192.0.2.1:5000/v3", "auth_url = http://192.0.2.1:5000/v3"},
	} {
		if got := RedactText(tc.in); got != tc.want {
			t.Errorf("RedactText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
