package history

import (
	"bytes"
	"io/fs"
	"strconv"
	"time"
	"unicode/utf8"
)

// decodeRecord reads a log line in the very form appendRecord writes it
// — fields in their order, optional ones left out — several times faster
// than encoding/json (a prune and every hunk log and undo read the whole
// log: 1.5 MB for three 2,000-file operations took ~40 ms). ok false: the
// line is in no such form, and encoding/json reads it (readLog).
//
// An entry numbered in headOnly is read but for its files (Entry.head):
// the rest of its line is not looked at.
func decodeRecord(line []byte, headOnly map[int64]bool) (rec record, ok bool) {
	d := &decoder{b: bytes.TrimSpace(line)}
	if !d.lit(`{"seq":`) {
		return record{}, false
	}
	rec.Seq = d.int()
	entry := d.lit(`,"entry":`)
	if entry && headOnly[rec.Seq] {
		rec.Entry = d.entryHead()
		rec.Entry.head = true
		return rec, !d.bad && utf8.Valid(d.b[:d.i])
	}
	if !utf8.Valid(d.b) { // (encoding/json reads invalid bytes as U+FFFD)
		return record{}, false
	}
	if entry {
		d.s = string(d.b) // its strings are cut from one (one allocation, not one a string)
		rec.Entry = d.entry()
	}
	rec.Commit = d.lit(`,"commit":true`)
	rec.Abort = d.lit(`,"abort":true`)
	if !d.lit("}") || d.i != len(d.b) || d.bad {
		return record{}, false
	}
	return rec, true
}

// decoder reads one line; bad: it is not in appendRecord's form.
type decoder struct {
	b    []byte
	s    string // b as a string, when it holds an entry ("": none made)
	i    int
	bad  bool
	ims  []Image // images made ahead, handed out one by one
	made int     // the size of the last block of them
}

// lit reports whether s is next, and passes it.
func (d *decoder) lit(s string) bool {
	if d.bad || !bytes.HasPrefix(d.b[d.i:], []byte(s)) {
		return false
	}
	d.i += len(s)
	return true
}

// key reports whether sep, then "name": is next, and passes it (lit of
// their concatenation, without making it: an image has seven keys to try).
func (d *decoder) key(sep, name string) bool {
	r := d.b[d.i:]
	n := len(sep) + len(name) + 3
	if d.bad || len(r) < n || string(r[:len(sep)]) != sep || r[len(sep)] != '"' ||
		string(r[len(sep)+1:n-2]) != name || r[n-2] != '"' || r[n-1] != ':' {
		return false
	}
	d.i += n
	return true
}

func (d *decoder) need(s string) {
	if !d.lit(s) {
		d.bad = true
	}
}

func (d *decoder) int() int64 {
	j := d.i
	if j < len(d.b) && d.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		j++
	}
	var n int64
	for _, c := range d.b[digits:j] {
		if n > (1<<63-1-9)/10 {
			d.bad = true // (out of range)
			break
		}
		n = n*10 + int64(c-'0')
	}
	if j == digits || j-digits > 1 && d.b[digits] == '0' {
		d.bad = true // (JSON has no leading zeros)
	}
	if digits > d.i {
		n = -n
	}
	d.i = j
	return n
}

// str reads a JSON string: as it is without escapes, else through
// strconv.Unquote (the escapes appendString writes are Go's too).
func (d *decoder) str() string {
	if d.bad || d.i >= len(d.b) || d.b[d.i] != '"' {
		d.bad = true
		return ""
	}
	esc := false
	for j := d.i + 1; j < len(d.b); j++ {
		switch d.b[j] {
		case '\\':
			// JSON's escapes only (Go's \a, \x, octal… are not).
			if j+1 >= len(d.b) || bytes.IndexByte([]byte(`"\\bfnrtu`), d.b[j+1]) < 0 {
				d.bad = true
				return ""
			}
			esc = true
			j++
		case '"':
			tok := d.b[d.i : j+1]
			from := d.i
			d.i = j + 1
			if !esc {
				if d.s != "" {
					return d.s[from+1 : j]
				}
				return string(tok[1 : len(tok)-1])
			}
			s, err := strconv.Unquote(string(tok))
			if err != nil {
				d.bad = true
			}
			return s
		default:
			if d.b[j] < 0x20 {
				d.bad = true
				return ""
			}
		}
	}
	d.bad = true
	return ""
}

func (d *decoder) entry() *Entry {
	e := d.entryHead()
	d.need(`,"files":`)
	if !d.lit("null") {
		d.need("[")
		e.Files = []FileChange{}
		for !d.bad && !d.lit("]") {
			if len(e.Files) > 0 {
				d.need(",")
			}
			e.Files = append(e.Files, d.file())
		}
	}
	d.need("}")
	return e
}

// entryHead reads an entry up to its files.
func (d *decoder) entryHead() *Entry {
	e := &Entry{}
	d.need(`{"id":`)
	e.ID = d.str()
	d.need(`,"seq":`)
	e.Seq = d.int()
	d.need(`,"time":`)
	t, err := time.Parse(time.RFC3339Nano, d.str())
	if err != nil {
		d.bad = true
	}
	e.Time = t
	d.need(`,"command":`)
	e.Command = d.str()
	if d.lit(`,"session":`) {
		e.Session = d.str()
	}
	e.Tool = d.lit(`,"tool":true`)
	if d.lit(`,"undoes":`) {
		e.Undoes = d.str()
	}
	if d.lit(`,"check":`) {
		e.Check = d.str()
	}
	return e
}

func (d *decoder) file() FileChange {
	var f FileChange
	d.need(`{"path":`)
	f.Path = d.str()
	if d.lit(`,"from":`) {
		f.From = d.str()
	}
	if d.lit(`,"pre":`) {
		f.Pre = d.image()
	}
	if d.lit(`,"post":`) {
		f.Post = d.image()
	}
	d.need("}")
	return f
}

func (d *decoder) image() *Image {
	if len(d.ims) == 0 { // (blocks growing to 64: a one-file entry's two images are one block)
		d.made = min(max(2*d.made, 2), 64)
		d.ims = make([]Image, d.made)
	}
	im := &d.ims[0]
	d.ims = d.ims[1:]
	d.need("{")
	sep := ""
	field := func(name string) bool { return d.key(sep, name) }
	if field("hash") {
		im.Hash, sep = d.str(), ","
	}
	if field("size") {
		im.Size, sep = d.int(), ","
	}
	if field("pack") {
		im.Pack, sep = d.str(), ","
	}
	if field("unhashed") {
		im.Unhashed, sep = d.str(), ","
	}
	if field("mode") {
		m := d.int()
		if m < 0 || m > 1<<32-1 {
			d.bad = true
		}
		im.Mode, sep = fs.FileMode(m), ","
	}
	if field("link") {
		im.Link, sep = d.str(), ","
	}
	if field("dir") {
		d.need("true")
		im.Dir = true
	}
	d.need("}")
	return im
}
