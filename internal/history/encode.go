package history

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The log's hot path — one record appended, the last one looked at — runs
// once per hunk process, where encoding/json's first use of a type (its
// reflection, a few hundred microseconds) would cost more than the rest of
// the recording. So records are written and peeked at by hand here, in the
// very form encoding/json reads back (readLog, prune and the tests use it);
// TestEncodeMatchesJSON holds the two equal.

// appendRecord appends r as one JSON object, fields in encoding/json's
// order and with its omitempty rules.
func appendRecord(b []byte, r record) []byte {
	if r.Hashed != nil { // a prune's, rare: encoding/json's form
		j, _ := json.Marshal(r)
		return append(b, j...)
	}
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	if r.Entry != nil {
		b = append(b, `,"entry":`...)
		b = appendEntry(b, r.Entry)
	}
	if r.Commit {
		b = append(b, `,"commit":true`...)
	}
	if r.Abort {
		b = append(b, `,"abort":true`...)
	}
	return append(b, '}')
}

func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"time":`...)
	b = appendString(b, e.Time.Format(time.RFC3339Nano))
	b = append(b, `,"command":`...)
	b = appendString(b, e.Command)
	if e.Session != "" {
		b = append(b, `,"session":`...)
		b = appendString(b, e.Session)
	}
	if e.Tool {
		b = append(b, `,"tool":true`...)
	}
	if e.Undoes != "" {
		b = append(b, `,"undoes":`...)
		b = appendString(b, e.Undoes)
	}
	if e.Check != "" {
		b = append(b, `,"check":`...)
		b = appendString(b, e.Check)
	}
	b = append(b, `,"files":`...)
	if e.Files == nil {
		return append(b, "null}"...)
	}
	b = append(b, '[')
	for i, f := range e.Files {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = appendString(b, f.Path)
		if f.From != "" {
			b = append(b, `,"from":`...)
			b = appendString(b, f.From)
		}
		if f.Pre != nil {
			b = append(b, `,"pre":`...)
			b = appendImage(b, f.Pre)
		}
		if f.Post != nil {
			b = append(b, `,"post":`...)
			b = appendImage(b, f.Post)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

func appendImage(b []byte, im *Image) []byte {
	b = append(b, '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
	}
	if im.Hash != "" {
		field("hash")
		b = appendString(b, im.Hash)
	}
	if im.Size != 0 {
		field("size")
		b = strconv.AppendInt(b, im.Size, 10)
	}
	if im.Pack != "" {
		field("pack")
		b = appendString(b, im.Pack)
	}
	if im.Unhashed != "" {
		field("unhashed")
		b = appendString(b, im.Unhashed)
	}
	if im.Mode != 0 {
		field("mode")
		b = strconv.AppendUint(b, uint64(im.Mode), 10)
	}
	if im.Link != "" {
		field("link")
		b = appendString(b, im.Link)
	}
	if im.Dir {
		field("dir")
		b = append(b, "true"...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string as encoding/json writes it
// (HTML characters escaped, invalid UTF-8 as U+FFFD).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// peekRecord reads what a log line's record is without decoding it:
// its sequence number, and whether it prepares an entry (rather than
// committing or aborting one). ok false: not a line appendRecord wrote.
func peekRecord(line []byte) (seq int64, entry, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !found {
		return 0, false, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	seq, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	if err != nil || seq <= 0 {
		return 0, false, false
	}
	rest = rest[n:]
	switch {
	case bytes.HasPrefix(rest, []byte(`,"entry":`)):
		return seq, true, true
	case bytes.Equal(rest, []byte(`,"commit":true}`)), bytes.Equal(rest, []byte(`,"abort":true}`)):
		return seq, false, true
	}
	return 0, false, false
}
