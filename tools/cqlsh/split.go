package cqlsh

import "strings"

// splitter gathers input lines into complete statements: text up to a
// semicolon that is not inside a string, a quoted name, a $$ string or a
// comment. Comments are kept; the server reads them as whitespace.
type splitter struct {
	buf strings.Builder
}

// add appends a line and returns the statements it completes (without
// their semicolons, trimmed, empty ones dropped).
func (s *splitter) add(line string) []string {
	if s.buf.Len() > 0 {
		s.buf.WriteByte('\n')
	}
	s.buf.WriteString(line)
	text := s.buf.String()
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\'' || c == '"':
			end := closing(text, i+1, c)
			if end < 0 {
				return s.keep(text[start:], out)
			}
			i = end
		case c == '$' && strings.HasPrefix(text[i:], "$$"):
			end := strings.Index(text[i+2:], "$$")
			if end < 0 {
				return s.keep(text[start:], out)
			}
			i += 2 + end + 1
		case c == '-' && strings.HasPrefix(text[i:], "--"), c == '/' && strings.HasPrefix(text[i:], "//"):
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				i = len(text)
				break
			}
			i += end
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return s.keep(text[start:], out)
			}
			i += 2 + end + 1
		case c == ';':
			if openBatch(text[start:i]) {
				continue // a statement of the batch ends, not the batch
			}
			if st := strings.TrimSpace(text[start:i]); st != "" && !onlyComments(st) {
				out = append(out, st)
			}
			start = i + 1
		}
	}
	return s.keep(text[start:], out)
}

// keep holds what follows the last statement for the next line.
func (s *splitter) keep(rest string, out []string) []string {
	s.buf.Reset()
	if !onlyComments(rest) {
		s.buf.WriteString(rest)
	}
	return out
}

// pending reports whether a statement has begun and not ended.
func (s *splitter) pending() bool { return strings.TrimSpace(s.buf.String()) != "" }

// reset drops a statement begun.
func (s *splitter) reset() { s.buf.Reset() }

// closing finds the quote that ends a string or quoted name opened before
// from (a doubled quote is an escaped one), or -1.
func closing(text string, from int, quote byte) int {
	for i := from; i < len(text); i++ {
		if text[i] == quote {
			if i+1 < len(text) && text[i+1] == quote {
				i++
				continue
			}
			return i
		}
	}
	return -1
}

// openBatch reports whether text begins a BATCH whose APPLY BATCH has not
// come yet: as in cqlsh, the semicolons between BEGIN and APPLY BATCH end
// the batch's statements, not the batch.
func openBatch(text string) bool {
	rest, closed := skipComments(text)
	words := strings.Fields(rest)
	if !closed || len(words) == 0 || !strings.EqualFold(words[0], "BEGIN") {
		return false
	}
	n := len(words)
	return n < 2 || !strings.EqualFold(words[n-2], "APPLY") || !strings.EqualFold(words[n-1], "BATCH")
}

// onlyComments reports whether a statement's text is comments alone.
func onlyComments(s string) bool {
	rest, closed := skipComments(s)
	return closed && rest == ""
}

// skipComments returns s after its leading comments and whitespace; closed
// is false when a /* comment is still open.
func skipComments(s string) (rest string, closed bool) {
	for {
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "--"), strings.HasPrefix(s, "//"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return "", true
			}
			s = s[i:]
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s, "*/")
			if i < 0 {
				return s, false
			}
			s = s[i+2:]
		default:
			return s, true
		}
	}
}
