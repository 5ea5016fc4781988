package cqlsh

import "strings"

// splitter gathers input lines into complete statements as cqlsh splits
// them: text up to a semicolon that is not inside a string, a quoted name,
// a $$ string or a comment; a batch ends at the semicolon after APPLY
// BATCH; and a statement whose first word is one of the shell commands
// that end with their line (newlineCommands) ends at the end of its line
// too. So "SHOW VERSION; DESCRIBE KEYSPACES; SELECT ..." is three
// statements, and "PAGING OFF" needs no semicolon, while COPY, like CQL,
// runs on until one. Comments are kept; the server reads them as
// whitespace.
type splitter struct {
	buf strings.Builder
}

// newlineCommands are cqlsh's commands that end at the end of their line
// (cqlshhandling's my_commands_ending_with_newline).
var newlineCommands = map[string]bool{
	"help": true, "?": true, "consistency": true, "serial": true, "describe": true, "desc": true, "show": true,
	"source": true, "capture": true, "login": true, "debug": true, "tracing": true, "expand": true,
	"paging": true, "exit": true, "quit": true, "clear": true, "cls": true,
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
	end := func(i int) {
		// Leading comments go: the first word says what the statement is.
		if st, _ := skipComments(text[start:i]); st != "" {
			out = append(out, strings.TrimSpace(st))
		}
		start = min(i+1, len(text))
	}
	for i := 0; i <= len(text); i++ {
		if i == len(text) || text[i] == '\n' {
			if endsWithLine(text[start:i]) {
				end(i)
			}
			continue
		}
		switch c := text[i]; {
		case c == '\'' || c == '"':
			close := closing(text, i+1, c)
			if close < 0 {
				return s.keep(text[start:], out)
			}
			i = close
		case c == '$' && strings.HasPrefix(text[i:], "$$"):
			close := strings.Index(text[i+2:], "$$")
			if close < 0 {
				return s.keep(text[start:], out)
			}
			i += 2 + close + 1
		case c == '-' && strings.HasPrefix(text[i:], "--"), c == '/' && strings.HasPrefix(text[i:], "//"):
			nl := strings.IndexByte(text[i:], '\n')
			if nl < 0 {
				i = len(text) - 1
				break
			}
			i += nl - 1 // the line's end is looked at next
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			close := strings.Index(text[i+2:], "*/")
			if close < 0 {
				return s.keep(text[start:], out)
			}
			i += 2 + close + 1
		case c == ';':
			if openBatch(text[start:i]) {
				continue // a statement of the batch ends, not the batch
			}
			end(i)
		}
	}
	return s.keep(text[start:], out)
}

// endsWithLine reports whether a statement begun is one of the commands
// that end at the end of their line.
func endsWithLine(stmt string) bool {
	rest, closed := skipComments(stmt)
	if !closed || rest == "" {
		return false
	}
	word := rest
	if i := strings.IndexAny(rest, " \t\n;"); i >= 0 {
		word = rest[:i]
	}
	return newlineCommands[strings.ToLower(word)]
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
