package cqlsh

import (
	"strings"
	"testing"
)

func TestParseRC(t *testing.T) {
	rc, err := ParseRC(strings.NewReader(`
; cqlshrc
[authentication]
username = alice
password = s3 cret

[connection]
hostname = 127.0.0.2
port: 19042
ssl = True

[ssl]
# the authority of the node's certificate
certfile = ~/certs/ca.pem
validate = false
`), "cqlshrc")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Get("authentication", "password") != "s3 cret" || rc.Get("connection", "hostname") != "127.0.0.2" {
		t.Fatalf("parsed %v", rc)
	}
	if port, err := rc.Int("connection", "port", 9042); err != nil || port != 19042 {
		t.Fatalf("port %d, %v", port, err)
	}
	if ssl, err := rc.Bool("connection", "ssl", false); err != nil || !ssl {
		t.Fatalf("ssl %v, %v", ssl, err)
	}
	if v, err := rc.Bool("ssl", "validate", true); err != nil || v {
		t.Fatalf("validate %v, %v", v, err)
	}
	if v, err := rc.Bool("ssl", "missing", true); err != nil || !v {
		t.Fatalf("a missing key's default: %v, %v", v, err)
	}
	if p := rc.Path("ssl", "certfile"); strings.HasPrefix(p, "~") || !strings.HasSuffix(p, "/certs/ca.pem") {
		t.Fatalf("certfile %q", p)
	}
	for _, bad := range []string{"[ssl\ncertfile = x", "certfile = x", "[ssl]\njust words"} {
		if _, err := ParseRC(strings.NewReader(bad), "rc"); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := (RC{"ssl": {"validate": "perhaps"}}).Bool("ssl", "validate", true); err == nil {
		t.Error("validate = perhaps parsed")
	}
}
