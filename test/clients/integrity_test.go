package clients

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/node"
)

// integrityNode is a node with its native protocol and admin API on free
// ports, in dir, that the test can stop and start again.
type integrityNode struct {
	t                     *testing.T
	dir                   string
	nativePort, adminPort int
	n                     *node.Node
}

func startIntegrityNode(t *testing.T) *integrityNode {
	in := &integrityNode{t: t, dir: t.TempDir(), nativePort: testutil.FreePort(t), adminPort: testutil.FreePort(t)}
	in.start()
	t.Cleanup(func() {
		if in.n != nil {
			in.n.Close()
		}
	})
	return in
}

func (in *integrityNode) start() {
	in.t.Helper()
	n, err := node.Open(node.Config{DataDir: in.dir, NativePort: in.nativePort, AdminPort: in.adminPort})
	if err != nil {
		in.t.Fatalf("the node does not start: %v", err)
	}
	in.n = n
	if _, err := n.StartAdmin(); err != nil {
		in.t.Fatal(err)
	}
	if _, err := n.StartNative(); err != nil {
		in.t.Fatal(err)
	}
}

func (in *integrityNode) restart() {
	in.t.Helper()
	if err := in.n.Close(); err != nil {
		in.t.Fatalf("closing the node: %v", err)
	}
	in.n = nil
	in.start()
}

// admin posts to the admin API and returns the status code.
func (in *integrityNode) admin(path string) int {
	in.t.Helper()
	resp, err := http.Post("http://127.0.0.1:"+strconv.Itoa(in.adminPort)+path, "", nil)
	if err != nil {
		in.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// checkAcrossFlushAndRestart runs check with the data in the memtable,
// after a flush (through the admin API, as nodetool flush) and after a
// restart, with *s a session to the node each time.
func (in *integrityNode) checkAcrossFlushAndRestart(s **gocql.Session, check func(when string)) {
	in.t.Helper()
	check("in the memtable")
	if code := in.admin("/flush"); code != http.StatusOK {
		in.t.Fatalf("flush answered %d", code)
	}
	check("after a flush")
	in.restart()
	*s = in.session()
	check("after a restart")
}

func (in *integrityNode) session() *gocql.Session {
	return session(in.t, gocqlCluster(in.nativePort))
}

// TestRepeatedSetElements binds sets with repeated elements, as gocql and
// the Node.js driver send them from arrays, and appends them: each reads
// back sorted and without repeats, and survives a flush and a restart.
func TestRepeatedSetElements(t *testing.T) {
	in := startIntegrityNode(t)
	s := in.session()
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.t (k int PRIMARY KEY, s set<int>, fs frozen<set<int>>, m map<int, text>)")
	if err := s.Query("INSERT INTO ks.t (k, s, fs) VALUES (?, ?, ?)", 1, []int{3, 1, 3}, []int{3, 1, 3}).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query("INSERT INTO ks.t (k, s) VALUES (?, ?)", 2, []int{2}).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query("UPDATE ks.t SET s = s + ? WHERE k = ?", []int{5, 5}, 2).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query("UPDATE ks.t SET s = s + {5, 5} WHERE k = 3").Exec(); err != nil {
		t.Fatal(err)
	}
	want := map[int][]int{1: {1, 3}, 2: {2, 5}, 3: {5}}
	check := func(when string) {
		t.Helper()
		got := map[int][]int{}
		iter := s.Query("SELECT k, s FROM ks.t").Iter()
		var k int
		var set []int
		for iter.Scan(&k, &set) {
			got[k] = set
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: scan: %v", when, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: sets %v, want %v", when, got, want)
		}
		var fs []int
		if err := s.Query("SELECT fs FROM ks.t WHERE k = 1").Scan(&fs); err != nil || !reflect.DeepEqual(fs, []int{1, 3}) {
			t.Fatalf("%s: frozen set %v (%v), want [1 3]", when, fs, err)
		}
	}
	in.checkAcrossFlushAndRestart(&s, check)
}

// raw is a value gocql sends as it is: the bytes a driver of another
// language, or a careless one, may put on the wire.
type raw []byte

func (r raw) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

func (r *raw) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	*r = append((*r)[:0], data...)
	return nil
}

func be32(n int32) []byte { return []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)} }

// rawItems is the [int n][bytes]... layout of collections; a nil item
// is written with length -1 and an item of one byte 0xFE with -2.
func rawItems(items ...[]byte) raw {
	out := be32(int32(len(items)))
	for _, it := range items {
		out = append(out, rawBytes(it)...)
	}
	return out
}

func rawBytes(b []byte) []byte {
	switch {
	case b == nil:
		return be32(-1)
	case len(b) == 1 && b[0] == 0xFE:
		return be32(-2)
	}
	return append(be32(int32(len(b))), b...)
}

// rawMap is a map's layout: [int n] then n keys and values in turn.
func rawMap(keysAndValues ...[]byte) raw {
	out := be32(int32(len(keysAndValues) / 2))
	for _, it := range keysAndValues {
		out = append(out, rawBytes(it)...)
	}
	return out
}

// rawFields is a tuple's or UDT's layout: [bytes] per component.
func rawFields(fields ...[]byte) raw {
	var out []byte
	for _, f := range fields {
		out = append(out, rawBytes(f)...)
	}
	return out
}

var unsetField = []byte{0xFE}

// TestBoundValuesAreCanonical binds collections, tuples and UDTs in every
// spelling a driver may send: unsorted and repeated set elements and map
// keys (top level and nested in frozen values), UDT fields sent as null
// (-1) or unset (-2) or left out. Each reads back in Cassandra's
// canonical form, a frozen key finds its row whatever order its elements
// came in, and nothing changes across a flush and a restart.
func TestBoundValuesAreCanonical(t *testing.T) {
	in := startIntegrityNode(t)
	s := in.session()
	mustExec(t, s, createKeyspace, "CREATE TYPE ks.addr (street text, zip int, tags frozen<set<int>>)",
		`CREATE TABLE ks.c (k int, ck frozen<set<int>>, m map<int, text>, fm frozen<map<int, text>>,
			l list<frozen<set<int>>>, fa frozen<addr>, a addr, PRIMARY KEY (k, ck))`)
	i32 := func(n int32) []byte { return be32(n) }
	insert := "INSERT INTO ks.c (k, ck, m, fm, l, fa, a) VALUES (?, ?, ?, ?, ?, ?, ?)"
	err := s.Query(insert, 1,
		rawItems(i32(3), i32(1), i32(3)),                                      // ck {1, 3}
		rawMap(i32(2), []byte("b"), i32(1), []byte("a"), i32(2), []byte("c")), // m {1: a, 2: c}
		rawMap(i32(9), []byte("x"), i32(7), []byte("y")),                      // fm {7: y, 9: x}
		rawItems(rawItems(i32(5), i32(4), i32(5))),                            // l [{4, 5}]
		rawFields([]byte("Main"), nil, rawItems(i32(2), i32(2), i32(1))),      // fa {street: Main, zip: null, tags: {1, 2}}
		rawFields(unsetField, i32(12345)),                                     // a {zip: 12345}
	).Exec()
	if err != nil {
		t.Fatal(err)
	}
	type addr struct {
		Street *string `cql:"street"`
		Zip    *int    `cql:"zip"`
		Tags   []int   `cql:"tags"`
	}
	check := func(when string) {
		t.Helper()
		var (
			m, fm  map[int]string
			l      [][]int
			fa, a  addr
			gotKey []int
		)
		q := s.Query("SELECT ck, m, fm, l, fa, a FROM ks.c WHERE k = 1 AND ck = ?", rawItems(i32(3), i32(1)))
		if err := q.Scan(&gotKey, &m, &fm, &l, &fa, &a); err != nil {
			t.Fatalf("%s: the row by its frozen key in another order: %v", when, err)
		}
		main, zip := "Main", 12345
		switch {
		case !reflect.DeepEqual(gotKey, []int{1, 3}):
			t.Errorf("%s: ck %v", when, gotKey)
		case !reflect.DeepEqual(m, map[int]string{1: "a", 2: "c"}):
			t.Errorf("%s: m %v", when, m)
		case !reflect.DeepEqual(fm, map[int]string{7: "y", 9: "x"}):
			t.Errorf("%s: fm %v", when, fm)
		case !reflect.DeepEqual(l, [][]int{{4, 5}}):
			t.Errorf("%s: l %v", when, l)
		case !reflect.DeepEqual(fa, addr{Street: &main, Tags: []int{1, 2}}):
			t.Errorf("%s: fa %+v", when, fa)
		case !reflect.DeepEqual(a, addr{Zip: &zip}):
			t.Errorf("%s: a %+v", when, a)
		}
		// What is stored is the canonical bytes, not only an equal value.
		var fmBytes, faBytes raw
		if err := s.Query("SELECT fm, fa FROM ks.c WHERE k = 1").Scan(&fmBytes, &faBytes); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if want := rawMap(i32(7), []byte("y"), i32(9), []byte("x")); !bytes.Equal(fmBytes, want) {
			t.Errorf("%s: fm is stored as %x, want %x", when, fmBytes, want)
		}
		if want := rawFields([]byte("Main"), nil, rawItems(i32(1), i32(2))); !bytes.Equal(faBytes, want) {
			t.Errorf("%s: fa is stored as %x, want %x", when, faBytes, want)
		}
	}
	in.checkAcrossFlushAndRestart(&s, check)
}

// wantRequestError checks that err is a server error of code with message.
func wantRequestError(t *testing.T, what string, err error, code int, message string) {
	t.Helper()
	var re gocql.RequestError
	if !errors.As(err, &re) || re.Code() != code || re.Message() != message {
		t.Errorf("%s: %v, want code %#x %q", what, err, code, message)
	}
}

// TestKeysOverCassandrasLimits sends partition keys and clustering values
// over 65,535 bytes, and empty partition keys: each is Invalid with
// Cassandra's message, nothing is written, and the node restarts with the
// rows it had.
func TestKeysOverCassandrasLimits(t *testing.T) {
	in := startIntegrityNode(t)
	s := in.session()
	mustExec(t, s, createKeyspace,
		"CREATE TABLE ks.b (k blob PRIMARY KEY, v int)",
		"CREATE TABLE ks.c (k blob, k2 blob, ck blob, v int, PRIMARY KEY ((k, k2), ck))",
		"CREATE TABLE ks.l (k frozen<list<int>> PRIMARY KEY, v int)",
		"CREATE TABLE ks.t (k text PRIMARY KEY, v int)",
		"INSERT INTO ks.b (k, v) VALUES (0x01, 1)")
	big := make([]byte, 65536)
	half := make([]byte, 32778)
	list := make([]int, 100000)
	const invalid = gocql.ErrCodeInvalid
	wantRequestError(t, "a 65,536-byte partition key", s.Query("INSERT INTO ks.b (k, v) VALUES (?, 1)", big).Exec(),
		invalid, "Key length of 65536 is longer than maximum of 65535")
	wantRequestError(t, "a 65,536-byte key by UPDATE", s.Query("UPDATE ks.b SET v = 1 WHERE k = ?", big).Exec(),
		invalid, "Key length of 65536 is longer than maximum of 65535")
	wantRequestError(t, "a composite key over the limit", s.Query("INSERT INTO ks.c (k, k2, ck, v) VALUES (?, ?, 0x01, 1)", half, half).Exec(),
		invalid, "Key length of 65562 is longer than maximum of 65535")
	wantRequestError(t, "a 70,000-byte clustering value", s.Query("INSERT INTO ks.c (k, k2, ck, v) VALUES (0x01, 0x02, ?, 1)", make([]byte, 70000)).Exec(),
		invalid, "Key length of 70000 is longer than maximum of 65535")
	wantRequestError(t, "a 70,000-byte clustering value by UPDATE", s.Query("UPDATE ks.c SET v = 1 WHERE k = 0x01 AND k2 = 0x02 AND ck = ?", make([]byte, 70000)).Exec(),
		invalid, "Key length of 70000 is longer than maximum of 65535")
	wantRequestError(t, "a list of 100,000 elements as a key", s.Query("INSERT INTO ks.l (k, v) VALUES (?, 1)", list).Exec(),
		invalid, "Key length of 800004 is longer than maximum of 65535")
	wantRequestError(t, "an empty key", s.Query("INSERT INTO ks.t (k, v) VALUES ('', 1)").Exec(), invalid, "Key may not be empty")
	wantRequestError(t, "a read of an empty key", s.Query("SELECT v FROM ks.t WHERE k = ''").Exec(), invalid, "Key may not be empty")
	// A value of the largest size is taken.
	if err := s.Query("INSERT INTO ks.b (k, v) VALUES (?, 2)", big[:65535]).Exec(); err != nil {
		t.Fatalf("a 65,535-byte key: %v", err)
	}
	in.restart()
	s = in.session()
	var n int
	if err := s.Query("SELECT count(*) FROM ks.b").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after a restart ks.b holds %d rows (%v), want 2", n, err)
	}
	for _, table := range []string{"c", "l", "t"} {
		if err := s.Query("SELECT count(*) FROM ks." + table).Scan(&n); err != nil || n != 0 {
			t.Fatalf("after a restart ks.%s holds %d rows (%v), want none", table, n, err)
		}
	}
}

// TestBadOptionsSaveNothing sends DDL with every kind of bad option: each
// is refused with Cassandra's error and message, nothing of it is saved,
// and the node restarts.
func TestBadOptionsSaveNothing(t *testing.T) {
	in := startIntegrityNode(t)
	s := in.session()
	mustExec(t, s, createKeyspace, "CREATE TABLE ks.kept (k int PRIMARY KEY, v int)")
	const (
		syntax = gocql.ErrCodeSyntax
		config = gocql.ErrCodeConfig
		inval  = gocql.ErrCodeInvalid
	)
	long := strings.Repeat("t", 240)
	for _, c := range []struct {
		stmt string
		code int
		msg  string
	}{
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 'abc'}", config,
			"Invalid value abc for 'min_threshold' compaction sub-option - must be an integer"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': '1'}", config,
			"Min compaction threshold cannot be less than 2 (got 1)"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'bucket_low': 'x'}", config,
			"x is not a parsable float for bucket_low"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '0'}", config,
			"sstable_size_in_mb must be larger than 0, but was 0"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH compaction = {'class': 'TimeWindowCompactionStrategy', 'compaction_window_unit': 'WEEKS'}", config,
			"WEEKS is not valid for compaction_window_unit"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'foo': '1'}", config,
			"Properties specified [foo] are not understood by SizeTieredCompactionStrategy"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH compaction = {'class': 'Nope'}", config,
			"Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.Nope'"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': '3'}", config,
			"chunk_length_in_kb must be a power of 2"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH caching = {'keys': 'SOME'}", config,
			"Invalid value 'SOME' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH speculative_retry = '100p'", config,
			"Invalid value 100p for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH gc_grace_seconds = 'abc'", syntax, "Invalid integer value abc for 'gc_grace_seconds'"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH bloom_filter_fp_chance = 0", config,
			"bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 0.0)"},
		{"CREATE TABLE ks.a (k int PRIMARY KEY) WITH read_repair_chance = 0.1", syntax, "Unknown property 'read_repair_chance'"},
		{"CREATE TABLE ks." + long + " (k int PRIMARY KEY)", config,
			"ks." + long + ": Table name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"" + long + "\")"},
		{"ALTER TABLE ks.kept WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'max_threshold': 'x'}", config,
			"Invalid value x for 'max_threshold' compaction sub-option - must be an integer"},
		{"CREATE KEYSPACE " + strings.Repeat("k", 250) + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", inval,
			"Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got '" + strings.Repeat("k", 250) + "')"},
		{"CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '3/1'}", config,
			"Transient replication is not enabled on this node"},
		{"CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 'abc'}", config, `For input string: "abc"`},
		{"CREATE KEYSPACE k2 WITH replication = {'class': 'NetworkTopologyStrategy', 'dc9': 3}", config,
			"Unrecognized strategy option {dc9} passed to NetworkTopologyStrategy for keyspace k2"},
		{"CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1, 'dc1': 1}", config,
			"Unrecognized strategy option {dc1} passed to SimpleStrategy for keyspace k2"},
		{"ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '-1'}", config,
			"Replication factor must be non-negative, found -1"},
	} {
		wantRequestError(t, c.stmt, s.Query(c.stmt).Exec(), c.code, c.msg)
	}
	check := func(when string) {
		t.Helper()
		iter := s.Query("SELECT keyspace_name, table_name FROM system_schema.tables WHERE keyspace_name IN ('ks', 'k2')").Iter()
		var ks, name string
		var got []string
		for iter.Scan(&ks, &name) {
			got = append(got, ks+"."+name)
		}
		if err := iter.Close(); err != nil || !reflect.DeepEqual(got, []string{"ks.kept"}) {
			t.Fatalf("%s: tables %v (%v), want only ks.kept", when, got, err)
		}
		var compaction map[string]string
		var repl map[string]string
		if err := s.Query("SELECT compaction FROM system_schema.tables WHERE keyspace_name = 'ks' AND table_name = 'kept'").Scan(&compaction); err != nil ||
			compaction["max_threshold"] != "32" {
			t.Fatalf("%s: ks.kept's compaction %v (%v)", when, compaction, err)
		}
		if err := s.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'ks'").Scan(&repl); err != nil || repl["replication_factor"] != "1" {
			t.Fatalf("%s: ks's replication %v (%v)", when, repl, err)
		}
	}
	check("before a restart")
	in.restart()
	s = in.session()
	check("after a restart")
}
