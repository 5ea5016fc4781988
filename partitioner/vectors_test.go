package partitioner

import (
	"bytes"
	"encoding/hex"
	"math"
	"strconv"
	"testing"
)

// mustHex decodes a hex literal from a test table.
func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic("bad hex in test table: " + s)
	}
	return b
}

type murmur3Vector struct {
	name  string
	key   []byte
	token int64
}

// murmur3Vectors are cassandra-semantics.md 3.1 rows 1-20 plus the empty key.
// Rows marked Q only pass with the sign-extension quirk.
var murmur3Vectors = []murmur3Vector{
	{"row1 123", []byte("123"), -7468325962851647638},
	{"row2 00ff10fa99x10 Q", bytes.Repeat(mustHex("00ff10fa99"), 10), 5837342703291459765},
	{"row3 fex8 Q", bytes.Repeat([]byte{0xfe}, 8), -8927430733708461935},
	{"row4 10x8", bytes.Repeat([]byte{0x10}, 8), 1446172840243228796},
	{"row5 maxlong string", []byte("9223372036854775807"), 7162290910810015547},
	{"row6 01..10", mustHex("0102030405060708090a0b0c0d0e0f10"), -5563837382979743776},
	{"row7 ffx16", bytes.Repeat([]byte{0xff}, 16), -2824192546314762522},
	{"row8 00010203+ffx12", append(mustHex("00010203"), bytes.Repeat([]byte{0xff}, 12)...), 6463632673159404390},
	{"row9 fex17 Q", bytes.Repeat([]byte{0xfe}, 17), -1672437813826982685},
	{"row10 fefefefe Q", mustHex("fefefefe"), 4566408979886474012},
	{"row11 00000000", mustHex("00000000"), -3485513579396041028},
	{"row12 00017f7f", mustHex("00017f7f"), 6573459401642635627},
	{"row13 e2e7e2e7e2e701 Q", mustHex("e2e7e2e7e2e701"), 2222373981930033306},
	{"row14 0000000000000080", mustHex("0000000000000080"), 78142285821850151},
	{"row15 gocql sign Q", mustHex("00104327529fb645dd00b883ec39ae448bb800000400066a6b00"), -9223371632693506265},
	{"row16 hello", []byte("hello"), -3758069500696749310},
	{"row17 quick brown fox", []byte("The quick brown fox jumps over the lazy dog."), -3631792323850337591},
	{"row18 0", []byte("0"), 3083240331115144064},
	{"row19 composite(143,234)", mustHex("00040000008f00" + "0004000000ea00"), 4958784316840156970},
	{"row20 int 1", mustHex("00000001"), -4069959284402364209},
	{"empty key is min token", nil, math.MinInt64},
}

// murmur3ExtraVectors come from other drivers' test suites (nodejs-driver
// tokenizer tests as carried by elixir-cassandra, and gocql); they add tail
// lengths and high-bit bytes the table above does not cover.
var murmur3ExtraVectors = []murmur3Vector{
	{"02..11", mustHex("02030405060708090a0b0c0d0e0f1011"), -1513403162740402161},
	{"03..12", mustHex("030405060708090a0b0c0d0e0f101112"), -495360443712684655},
	{"00x16", make([]byte, 16), 5457549051747178710},
	{"fex16", bytes.Repeat([]byte{0xfe}, 16), -833317529301936754},
	{"00ffffff", mustHex("00ffffff"), 123573637386978882},
	{"ff010203", mustHex("ff010203"), -2839127690952877842},
	{"e2e7", mustHex("e2e7"), -8582699461035929883},
	{"hello, world", []byte("hello, world"), s64(0x342fac623a5ebc8e)},
	{"19 Jan 2038", []byte("19 Jan 2038 at 3:14:07 AM"), s64(0xb89e5988b737affc)},
}

// s64 reinterprets an h1 printed in hex as the signed token.
func s64(h1 uint64) int64 { return int64(h1) }

func TestMurmur3Vectors(t *testing.T) {
	p := Murmur3()
	for _, tables := range [][]murmur3Vector{murmur3Vectors, murmur3ExtraVectors} {
		for _, v := range tables {
			t.Run(v.name, func(t *testing.T) {
				got := p.Token(v.key)
				if got.Int64() != v.token || got.Kind() != Murmur3Kind {
					t.Fatalf("Token(%x) = %v (kind %v), want %d", v.key, got, got.Kind(), v.token)
				}
				if got.String() != strconv.FormatInt(v.token, 10) {
					t.Fatalf("String = %q, want %d", got.String(), v.token)
				}
				if got != Murmur3Token(v.token) {
					t.Fatalf("Token(%x) != Murmur3Token(%d)", v.key, v.token)
				}
			})
		}
	}
}

// TestMurmur3GocqlSeries checks gocql's "", "0", "01", ... series (20 keys,
// every tail length 0-15 plus a full block and more), which pins the raw h1
// including h1("") = 0 that Token replaces with the minimum token.
func TestMurmur3GocqlSeries(t *testing.T) {
	want := [...]uint64{
		0x0000000000000000, 0x2ac9debed546a380, 0x649e4eaa7fc1708e, 0xce68f60d7c353bdb,
		0x0f95757ce7f38254, 0x0f04e459497f3fc1, 0x88c0a92586be0a27, 0x13eb9fb82606f7a6,
		0x8236039b7387354d, 0x4c1e87519fe738ba, 0x3f9652ac3effeb24, 0x3f33760ded9006c6,
		0xaed70a6631854cb1, 0x8a299a8f8e0e2da7, 0x624b675c779249a6, 0xa4b203bb1d90b9a3,
		0xa3293ad698ecb99a, 0xbc740023dbd50048, 0x3fe5ab9837d25cdd, 0x2d0338c1ca87d132,
	}
	key := []byte{}
	for i, w := range want {
		if h1, _ := Murmur3Hash(key); h1 != w {
			t.Errorf("Murmur3Hash(%q) h1 = %#016x, want %#016x", key, h1, w)
		}
		if len(key) > 0 {
			if got := Murmur3().Token(key).Int64(); got != int64(w) {
				t.Errorf("Token(%q) = %d, want %d", key, got, int64(w))
			}
		}
		key = append(key, byte('0'+i%10))
	}
	if got := Murmur3().Token(nil); !got.IsMinimum() || got.Int64() != math.MinInt64 {
		t.Errorf("Token(empty) = %v, want the minimum token", got)
	}

	// gocql's benchmark key: 1024 bytes 0x00..0xff repeated.
	data := make([]byte, 1024)
	for i := range data {
		data[i] = byte(i)
	}
	if got := Murmur3().Token(data).Int64(); got != 7627370222079200297 {
		t.Errorf("Token(0..1023) = %d, want 7627370222079200297", got)
	}
}

// TestMurmur3TailSignSeries uses gocql's CassandraMurmur3H1 series: a prefix
// then high-bit bytes (0xc8 and up), one more each key, so every tail length
// has sign-extended bytes at every tail offset.
func TestMurmur3TailSignSeries(t *testing.T) {
	prefix := "prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f"
	want1 := []int64{ // prefix[:7+i] for i = 0..
		-5156414768376541762, 3700033067394128583, -3973852022020331202, 3038655072509758878,
		-5681686890369564299, 8960422816272944721, -1104872167714568090, -9199676315897541990,
		4847624695450664884, -2737291859101550625, -1154133289533387924, 5781349077088505981,
		-681021187788781932, -3787130296809111096, -3115393326357146996, -2684252762052835206,
	}
	for i, w := range want1 {
		key := prefix[:7+i]
		if got := Murmur3().Token([]byte(key)).Int64(); got != w {
			t.Errorf("Token(%q) = %d, want %d", key, got, w)
		}
	}
	if got := Murmur3().Token([]byte(prefix + "\xc8")).Int64(); got != -278181328349571586 {
		t.Errorf("Token(prefix+c8) = %d, want -278181328349571586", got)
	}
	prefix2 := prefix + "\xc8\xc9"
	want2 := []int64{
		-5319761130493488577, -4593148434938707926, -575713103357290760, 4290743753678124926,
		9164754117279683406, -107668053986278786, 64887291506465003, 6241282934480161521,
		5150183507841894143, 5645797256444299552, -908235285856554578, -1785405279637408062,
		5343233714768265848, 4936964276934412722, 2294903531026336836,
	}
	key := []byte(prefix2)
	for i, w := range want2 {
		if got := Murmur3().Token(key).Int64(); got != w {
			t.Errorf("Token(%q) = %d, want %d", key, got, w)
		}
		key = append(key, byte(0xca+i))
	}
}

// TestMurmur3MinNormalization covers the h1 == MinInt64 rule through the
// internal step, since no known key hashes there.
func TestMurmur3MinNormalization(t *testing.T) {
	if got := murmur3TokenFromHash(1 << 63); got.Int64() != math.MaxInt64 {
		t.Errorf("h1 = MinInt64 gives %v, want MaxInt64", got)
	}
	for _, v := range []int64{math.MinInt64 + 1, -1, 0, 1, math.MaxInt64} {
		if got := murmur3TokenFromHash(uint64(v)); got.Int64() != v {
			t.Errorf("h1 = %d gives %v, want unchanged", v, got)
		}
	}
}

func TestMurmur3CompositeRow19(t *testing.T) {
	key := CompositeKey([]byte{0, 0, 0, 143}, []byte{0, 0, 0, 234})
	if want := mustHex("00040000008f000004000000ea00"); !bytes.Equal(key, want) {
		t.Fatalf("CompositeKey(143, 234) = %x, want %x", key, want)
	}
	if got := Murmur3().Token(key).Int64(); got != 4958784316840156970 {
		t.Fatalf("Token = %d, want 4958784316840156970", got)
	}
}

type randomVector struct {
	name  string
	key   []byte
	token string
}

// randomVectors are cassandra-semantics.md 3.2 rows 1-13 plus the empty key.
var randomVectors = []randomVector{
	{"row1 test", []byte("test"), "12707736894140473154801792860916528374"},
	{"row2 123", []byte("123"), "42767516990368493138776584305024125808"},
	{"row3 maxlong string", []byte("9223372036854775807"), "28528976619278518853815276204542453639"},
	{"row4 01020304", mustHex("01020304"), "11748876857495436398853550283091289647"},
	{"row5 010203040506", mustHex("010203040506"), "141904934057871337334287797400233978956"},
	{"row6 fffafa000102030405fe", mustHex("fffafa000102030405fe"), "93979376327542758013347018124903879310"},
	{"row7 f000ee0000", mustHex("f000ee0000"), "155172302213453714586395175393246848871"},
	{"row8 a", []byte("a"), "16955237001963240173058271559858726497"},
	{"row9 b abs", []byte("b"), "144992942750327304334463589818972416113"},
	{"row10 c", []byte("c"), "99079589977253916124855502156832923443"},
	{"row11 d abs", []byte("d"), "166860289390734216023086131251507064403"},
	{"row12 abc abs", []byte("abc"), "148866708576779697295343134153845407886"},
	{"row13 xyz abs", []byte("xyz"), "61893731502141497228477852773302439842"},
	{"empty key is min token", nil, "-1"},
}

func TestRandomVectors(t *testing.T) {
	p := Random()
	for _, v := range randomVectors {
		t.Run(v.name, func(t *testing.T) {
			got := p.Token(v.key)
			if got.Kind() != RandomKind || got.String() != v.token {
				t.Fatalf("Token(%x) = %v (kind %v), want %s", v.key, got, got.Kind(), v.token)
			}
			if got.BigInt().String() != v.token {
				t.Fatalf("BigInt = %v, want %s", got.BigInt(), v.token)
			}
			parsed, err := p.ParseToken(v.token)
			if err != nil || parsed != got {
				t.Fatalf("ParseToken(%s) = %v, %v; want %v", v.token, parsed, err, got)
			}
		})
	}
}

// TestRandomAbsEdge checks the one digest whose absolute value is 2^127 and
// its neighbours; no key with those digests is known.
func TestRandomAbsEdge(t *testing.T) {
	cases := []struct{ digest, token string }{
		{"80000000000000000000000000000000", "170141183460469231731687303715884105728"},
		{"80000000000000000000000000000001", "170141183460469231731687303715884105727"},
		{"ffffffffffffffffffffffffffffffff", "1"},
		{"7fffffffffffffffffffffffffffffff", "170141183460469231731687303715884105727"},
		{"00000000000000000000000000000000", "0"},
		{"ffffffffffffffff0000000000000000", "18446744073709551616"},
	}
	for _, c := range cases {
		d := [16]byte(mustHex(c.digest))
		if got := randomFromDigest(d); got.String() != c.token {
			t.Errorf("digest %s: token %v, want %s", c.digest, got, c.token)
		}
	}
	if got := randomFromDigest([16]byte(mustHex("80000000000000000000000000000000"))); got != Random().MaxToken() {
		t.Errorf("abs(-2^127) = %v, want MaxToken", got)
	}
}
