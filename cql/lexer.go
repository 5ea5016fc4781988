package cql

import (
	"strings"
	"unicode/utf8"
)

type tokenKind uint8

const (
	tkEOF         tokenKind = iota
	tkIdent                 // an unquoted word: an identifier or a keyword
	tkQuotedIdent           // "..." (text unescaped, case kept)
	tkString                // '...' or $$...$$ (text unescaped)
	tkInteger               // optional '-', digits
	tkFloat                 // decimal with '.' and/or exponent, or -NaN / -Infinity
	tkDuration              // 1h30m, P1Y2M, PT1H, P1W, P0001-02-03T04:05:06
	tkUUID                  // 8-4-4-4-12 hex digits
	tkHex                   // 0x...
	tkPunct                 // operators and punctuation, including '?'
)

// token is one lexed token. Positions are those Cassandra reports: the line
// counted from 1 and the column, in characters, from 0.
type token struct {
	kind  tokenKind
	text  string // as written; unescaped content for strings and quoted names
	lower string // tkIdent only: text folded to lower case
	line  int
	col   int
	// index is the token's place in the stream Cassandra's lexer makes,
	// which holds the hidden tokens too (runs of whitespace, comments):
	// error snippets count back through them.
	index int
}

// streamPos is where a token of that stream (hidden or not) starts.
type streamPos struct{ line, col int }

// display renders the token the way ANTLR quotes an offending token.
func (t *token) display() string {
	if t.kind == tkEOF {
		return "'<EOF>'"
	}
	s := strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(t.text)
	return "'" + s + "'"
}

type lexer struct {
	src    string
	pos    int
	line   int
	col    int
	toks   []token
	stream []streamPos // every token's start, hidden ones too
}

// lex splits src into tokens, ending with a tkEOF token that carries the
// position just past the input. Cassandra's lexer runs to the end before the
// parser reports anything, so a lexical error wins over a syntax error.
func lex(src string) ([]token, []streamPos, *SyntaxError) {
	l := &lexer{src: src, line: 1}
	for {
		if err := l.skipSpace(); err != nil {
			return nil, nil, err
		}
		if l.pos >= len(l.src) {
			// Cassandra's lexer ends with a bare EOF token: line 0,
			// column -1, which is what its messages then show.
			l.toks = append(l.toks, token{kind: tkEOF, line: 0, col: -1, index: len(l.stream)})
			return l.toks, l.stream, nil
		}
		if err := l.scan(); err != nil {
			return nil, nil, err
		}
	}
}

// hidden records a hidden token starting here.
func (l *lexer) hidden() { l.stream = append(l.stream, streamPos{l.line, l.col}) }

// advance moves past n bytes, keeping line and column: every byte is looked
// at once here, so positions cost linear time however long the lines are.
func (l *lexer) advance(n int) {
	end := l.pos + n
	for l.pos < end {
		c := l.src[l.pos]
		if c == '\n' {
			l.line++
			l.col = 0
			l.pos++
			continue
		}
		if c < utf8.RuneSelf {
			l.pos++
		} else {
			_, size := utf8.DecodeRuneInString(l.src[l.pos:])
			l.pos += size
		}
		l.col++
	}
	l.pos = end
}

func (l *lexer) errorHere(msg string) *SyntaxError {
	return &SyntaxError{Line: l.line, Column: l.col, Message: msg}
}

// charDisplay quotes the character at the current position as ANTLR's lexer
// does in its messages.
func (l *lexer) charDisplay() string {
	if l.pos >= len(l.src) {
		return "'<EOF>'"
	}
	r, _ := utf8.DecodeRuneInString(l.src[l.pos:])
	switch r {
	case '\n':
		return `'\n'`
	case '\r':
		return `'\r'`
	case '\t':
		return `'\t'`
	}
	return "'" + string(r) + "'"
}

func (l *lexer) skipSpace() *SyntaxError {
	inSpace := false // a run of whitespace is one hidden token
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if !inSpace {
				l.hidden()
			}
			inSpace = true
			l.advance(1)
			continue
		case strings.HasPrefix(l.src[l.pos:], "--") || strings.HasPrefix(l.src[l.pos:], "//"):
			// Cassandra wants a line end after a line comment (it is part
			// of the comment); a comment closing the input is accepted
			// here, as cqlsh sends them.
			l.hidden()
			i := strings.IndexAny(l.src[l.pos:], "\n\r")
			if i < 0 {
				i = len(l.src) - l.pos - 1
			}
			l.advance(i + 1)
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			l.hidden()
			i := strings.Index(l.src[l.pos+2:], "*/")
			if i < 0 {
				l.advance(len(l.src) - l.pos)
				return l.errorHere("mismatched character '<EOF>' expecting '*'")
			}
			l.advance(i + 4)
		default:
			return nil
		}
		inSpace = false
	}
	return nil
}

func (l *lexer) emit(kind tokenKind, text string, line, col int) {
	t := token{kind: kind, text: text, line: line, col: col, index: len(l.stream)}
	l.stream = append(l.stream, streamPos{line, col})
	if kind == tkIdent {
		t.lower = strings.ToLower(text)
	}
	l.toks = append(l.toks, t)
}

// punctuation, longest first so that "<=" wins over "<".
var punctuation = []string{
	"<=", ">=", "!=", "+=", "-=", "..",
	"(", ")", ",", ";", ".", "=", "<", ">", "[", "]", "{", "}", ":", "+", "-", "*", "/", "%", "?",
}

func (l *lexer) scan() *SyntaxError {
	line, col := l.line, l.col
	rest := l.src[l.pos:]
	c := rest[0]
	if n := uuidLen(rest); n > 0 {
		l.emit(tkUUID, strings.ToLower(rest[:n]), line, col)
		l.advance(n)
		return nil
	}
	switch {
	case c == '\'':
		return l.scanQuoted('\'', tkString)
	case c == '"':
		return l.scanQuoted('"', tkQuotedIdent)
	case c == '$' && strings.HasPrefix(rest, "$$"):
		i := strings.Index(rest[2:], "$$")
		if i < 0 {
			l.advance(len(rest))
			return l.errorHere("mismatched character '<EOF>' expecting '$'")
		}
		l.emit(tkString, rest[2:2+i], line, col)
		l.advance(i + 4)
		return nil
	case c == '0' && len(rest) > 1 && (rest[1] == 'x' || rest[1] == 'X'):
		n := 2
		for n < len(rest) && isHex(rest[n]) {
			n++
		}
		l.emit(tkHex, strings.ToLower(rest[:n]), line, col)
		l.advance(n)
		return nil
	case isDigit(c) || c == '-' && len(rest) > 1 && isDigit(rest[1]):
		kind, n := scanNumber(rest)
		l.emit(kind, rest[:n], line, col)
		l.advance(n)
		return nil
	case c == '-' || c == 'P':
		if n := isoDurationLen(rest); n > 0 {
			l.emit(tkDuration, rest[:n], line, col)
			l.advance(n)
			return nil
		}
		if c == '-' {
			if w := wordAt(rest[1:]); strings.EqualFold(w, "nan") || strings.EqualFold(w, "infinity") {
				l.emit(tkFloat, rest[:1+len(w)], line, col)
				l.advance(1 + len(w))
				return nil
			}
		}
	}
	if isLetter(c) {
		w := wordAt(rest)
		l.emit(tkIdent, w, line, col)
		l.advance(len(w))
		return nil
	}
	for _, p := range punctuation {
		if strings.HasPrefix(rest, p) {
			l.emit(tkPunct, p, line, col)
			l.advance(len(p))
			return nil
		}
	}
	if c == '!' {
		l.advance(1)
		return l.errorHere("mismatched character " + l.charDisplay() + " expecting '='")
	}
	return l.errorHere("no viable alternative at character " + l.charDisplay())
}

// scanQuoted reads a '...' string or a "..." name, where a doubled quote
// stands for one.
func (l *lexer) scanQuoted(q byte, kind tokenKind) *SyntaxError {
	line, col := l.line, l.col
	rest := l.src[l.pos:]
	var b strings.Builder
	i := 1
	for {
		j := strings.IndexByte(rest[i:], q)
		if j < 0 {
			l.advance(len(rest))
			return l.errorHere("mismatched character '<EOF>' expecting '" + string(q) + "'")
		}
		b.WriteString(rest[i : i+j])
		i += j + 1
		if i < len(rest) && rest[i] == q {
			b.WriteByte(q)
			i++
			continue
		}
		break
	}
	l.emit(kind, b.String(), line, col)
	l.advance(i)
	return nil
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isWordChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_'
}

// wordAt returns the identifier-shaped word at the start of s ("" if none).
func wordAt(s string) string {
	if s == "" || !isLetter(s[0]) {
		return ""
	}
	n := 1
	for n < len(s) && isWordChar(s[n]) {
		n++
	}
	return s[:n]
}

// uuidLen returns 36 when s starts with an unquoted uuid. Cassandra's lexer
// takes the longest match, and a uuid is longer than the number or word its
// first group would otherwise be.
func uuidLen(s string) int {
	if len(s) < 36 {
		return 0
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return 0
			}
		default:
			if !isHex(s[i]) {
				return 0
			}
		}
	}
	return 36
}

func digitsLen(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// durationUnitLen returns the length of the duration unit at the start of s,
// longest first (mo before m, ms before m and s).
func durationUnitLen(s string) int {
	if len(s) >= 2 {
		switch strings.ToLower(s[:2]) {
		case "mo", "ms", "us", "ns":
			return 2
		}
	}
	if strings.HasPrefix(s, "µ") && len(s) > len("µ") && (s[len("µ")] == 's' || s[len("µ")] == 'S') {
		return len("µ") + 1
	}
	if s != "" {
		switch s[0] {
		case 'y', 'Y', 'w', 'W', 'd', 'D', 'h', 'H', 'm', 'M', 's', 'S':
			return 1
		}
	}
	return 0
}

// scanNumber reads an integer, a float or a unit duration (1h30m) at the
// start of s, which begins with a digit or with '-' and a digit.
func scanNumber(s string) (tokenKind, int) {
	n := 0
	if s[0] == '-' {
		n = 1
	}
	n += digitsLen(s[n:])
	if u := durationUnitLen(s[n:]); u > 0 {
		n += u
		for {
			d := digitsLen(s[n:])
			if d == 0 {
				break
			}
			u := durationUnitLen(s[n+d:])
			if u == 0 {
				break
			}
			n += d + u
		}
		return tkDuration, n
	}
	kind := tkInteger
	// "1..2" is a range, not the float "1." followed by ".2".
	if n < len(s) && s[n] == '.' && !strings.HasPrefix(s[n:], "..") {
		kind = tkFloat
		n++
		n += digitsLen(s[n:])
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		m := n + 1
		if m < len(s) && (s[m] == '+' || s[m] == '-') {
			m++
		}
		if d := digitsLen(s[m:]); d > 0 {
			kind = tkFloat
			n = m + d
		}
	}
	return kind, n
}

// isoDurationLen returns the length of an ISO 8601 duration at the start of
// s (optionally negative), or 0. Like Cassandra's lexer, the designators are
// upper case only, and a word that merely starts like a duration ("P1Dx")
// is an identifier.
func isoDurationLen(s string) int {
	n := 0
	if strings.HasPrefix(s, "-") {
		n = 1
	}
	if n >= len(s) || s[n] != 'P' {
		return 0
	}
	if m := isoAlternativeLen(s[n:]); m > 0 {
		if n+m < len(s) && isWordChar(s[n+m]) {
			return 0
		}
		return n + m
	}
	w := wordAt(s[n:])
	if !isISODesignators(w[1:]) {
		return 0
	}
	return n + len(w)
}

// isoAlternativeLen matches the "alternative format" PYYYY-MM-DDThh:mm:ss.
func isoAlternativeLen(s string) int {
	const shape = "P0000-00-00T00:00:00"
	if len(s) < len(shape) {
		return 0
	}
	for i := 0; i < len(shape); i++ {
		if shape[i] == '0' {
			if !isDigit(s[i]) {
				return 0
			}
		} else if s[i] != shape[i] {
			return 0
		}
	}
	return len(shape)
}

// isISODesignators reports whether s (what follows the P) is nW, or date
// designators in Y, M, D order followed by an optional T with H, M, S, with
// at least one designator in every part present.
func isISODesignators(s string) bool {
	if s == "" {
		return false
	}
	take := func(units string) (int, bool) {
		// Consumes "<digits><unit>" pairs whose units appear in order.
		count := 0
		for s != "" {
			d := digitsLen(s)
			if d == 0 || d == len(s) {
				return count, d == 0
			}
			i := strings.IndexByte(units, s[d])
			if i < 0 {
				return count, false
			}
			units = units[i+1:]
			s = s[d+1:]
			count++
		}
		return count, true
	}
	if d := digitsLen(s); d > 0 && d == len(s)-1 && s[d] == 'W' {
		return true
	}
	dates, ok := take("YMD")
	if !ok {
		return false
	}
	if s == "" {
		return dates > 0
	}
	if s[0] != 'T' {
		return false
	}
	s = s[1:]
	times, ok := take("HMS")
	return ok && s == "" && times > 0
}
