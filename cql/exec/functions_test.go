package exec

import (
	"strings"
	"testing"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/partitioner"
)

// randomCoordinator is a memCoordinator on the RandomPartitioner, to check
// that token() follows the coordinator's partitioner.
type randomCoordinator struct{ *memCoordinator }

func (randomCoordinator) Partitioner() partitioner.Partitioner { return partitioner.Random() }

// runBound runs statements with bound values and renders the last outcome.
func runBound(t *testing.T, s *Session, text string, bound ...[]byte) string {
	t.Helper()
	rs, err := s.Run(text, bound...)
	if err != nil {
		return render(nil, err)
	}
	return render(rs[len(rs)-1], nil)
}

func TestFunctionsWithBoundValues(t *testing.T) {
	s := NewSession(newMemCoordinator())
	setup := `CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		USE b; CREATE TABLE t (k int PRIMARY KEY, v int, b blob, s text)`
	if out := runBound(t, s, setup); out != "CREATED TABLE b t" {
		t.Fatalf("setup: %s", out)
	}
	for _, tc := range []struct {
		stmt  string
		bound [][]byte
		want  string
	}{
		{"INSERT INTO t (k, b, s) VALUES (?, textAsBlob(?), blobAsText(?))",
			[][]byte{cqltype.EncodeInt(1), []byte("hi"), []byte("yo")}, "ok"},
		{"SELECT k, b, s FROM t WHERE k = blobAsInt(?)", [][]byte{cqltype.EncodeInt(1)},
			"k | b | s\n1 | 0x6869 | 'yo'\n(1 rows)"},
		{"INSERT INTO t (k, b) VALUES (2, intAsBlob(?))", [][]byte{nil}, "ok"},
		{"SELECT b FROM t WHERE k = 2", nil, "b\nnull\n(1 rows)"},
		{"INSERT INTO t (k, b) VALUES (2, intAsBlob(?))", [][]byte{{1, 2}},
			"error Invalid: Expected 4 or 0 byte int (2)"},
		{"INSERT INTO t (k, v) VALUES (3, (int)?)", [][]byte{cqltype.EncodeInt(9)}, "ok"},
		{"INSERT INTO t (k, v) VALUES (4, CAST((float)? AS int))", [][]byte{cqltype.EncodeFloat(3.4)}, "ok"},
		{"SELECT k, v FROM t WHERE k = 4", nil, "k | v\n4 | 3\n(1 rows)"},
		{"SELECT intAsBlob(?), (text)?, blobAsInt(intAsBlob(v)) FROM t WHERE k = 3",
			[][]byte{cqltype.EncodeInt(5), []byte("x")},
			"system.intasblob(?) | (text)? | system.blobasint(system.intasblob(v))\n0x00000005 | 'x' | 9\n(1 rows)"},
		{"SELECT count(?) FROM t", [][]byte{cqltype.EncodeInt(1)}, "error Invalid: Ambiguous call to function count"},
	} {
		if got := runBound(t, s, tc.stmt, tc.bound...); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.stmt, got, tc.want)
		}
	}
}

func TestTokenFollowsPartitioner(t *testing.T) {
	s := NewSession(randomCoordinator{newMemCoordinator()})
	out := runBound(t, s, `CREATE KEYSPACE r WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		USE r; CREATE TABLE t (k int PRIMARY KEY); INSERT INTO t (k) VALUES (1); SELECT token(k) FROM t`)
	want := "system.token(k)\n" + partitioner.Random().Token(cqltype.EncodeInt(1)).String() + "\n(1 rows)"
	if out != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
	rs, err := s.Run("SELECT token(k) FROM t")
	if err != nil || rs[0].Columns[0].Type.Kind != cqltype.Varint {
		t.Errorf("token() of the RandomPartitioner should be a varint: %v %v", rs, err)
	}
}
