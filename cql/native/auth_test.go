package native

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzDecodePlain: any token either decodes to a non-empty user and
// password free of NULs, which encode back to a token that decodes the
// same, or is refused with one of Cassandra's three messages.
func FuzzDecodePlain(f *testing.F) {
	for _, s := range []string{"", "\x00", "\x00u\x00p", "a\x00u\x00p", "\x00\x00p", "\x00u\x00", "a\x00b\x00c\x00d", "u\x00p"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, token []byte) {
		user, password, err := DecodePlain(token)
		if err != nil {
			switch err.Error() {
			case "Password must not be null", "Authentication ID must not be null",
				`Credential format error: username or password is empty or contains NUL(\0) character`:
			default:
				t.Fatalf("%q: unexpected refusal %v", token, err)
			}
			return
		}
		if user == "" || password == "" || strings.ContainsRune(user, 0) || strings.ContainsRune(password, 0) {
			t.Fatalf("%q decoded to %q, %q", token, user, password)
		}
		if !bytes.HasSuffix(token, []byte("\x00"+user+"\x00"+password)) && !bytes.Equal(token, []byte(user+"\x00"+password)) {
			t.Fatalf("%q decoded to %q, %q, which it does not end with", token, user, password)
		}
		u2, p2, err := DecodePlain([]byte("\x00" + user + "\x00" + password))
		if err != nil || u2 != user || p2 != password {
			t.Fatalf("%q, %q do not round-trip: %q, %q, %v", user, password, u2, p2, err)
		}
	})
}
