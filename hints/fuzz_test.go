package hints

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
)

// FuzzHintsFile delivers a hints file of any bytes, in either format: the
// store opens, delivers what decodes, counts the rest and removes the
// file, never panicking.
func FuzzHintsFile(f *testing.F) {
	fs, c := vfs.NewMem(), newClock()
	s, err := Open(Options{FS: fs, Dir: "hints", Now: c.Now})
	if err != nil {
		f.Fatal(err)
	}
	for i := range 3 {
		if err := s.Write("a", hint(i), 3600); err != nil {
			f.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		f.Fatal(err)
	}
	names, _ := fs.List("hints")
	file, err := fs.Open("hints/" + names[0])
	if err != nil {
		f.Fatal(err)
	}
	st, _ := file.Stat()
	seed := make([]byte, st.Size())
	if _, err := file.ReadAt(seed, 0); err != nil {
		f.Fatal(err)
	}
	file.Close()
	f.Add(seed, false)
	f.Add(seed[:len(seed)/2], true)
	f.Add([]byte{0, 0, 0, 5, 1, 2, 3, 4, 9}, false)
	f.Fuzz(func(t *testing.T, data []byte, legacy bool) {
		fs, c := vfs.NewMem(), newClock()
		if err := fs.MkdirAll("hints", 0o755); err != nil {
			t.Fatal(err)
		}
		name := "hints/b-1700000000000-2.hints"
		if legacy {
			name = "hints/b.hints"
		}
		w, err := fs.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		w.Close()
		s := open(t, fs, c, Options{})
		defer s.Close()
		var got collector
		res, err := s.Deliver(context.Background(), "b", Delivery{Send: got.send})
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(got.got)) != res.Delivered || s.Has("b") {
			t.Fatalf("delivered %d hints, counted %d; hints left: %v", len(got.got), res.Delivered, s.Has("b"))
		}
	})
}
