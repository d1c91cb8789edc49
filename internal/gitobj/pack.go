package gitobj

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/hunk-dev/hunk/internal/patchparse"
)

// pack is one pack file and its index (pack-<id>.pack, pack-<id>.idx),
// opened on first use. The index is read where a lookup needs it (its
// fan-out table, then a binary search), never whole.
type pack struct {
	store *Store
	name  string // without its extension

	once     sync.Once
	err      error
	idx, pck *os.File
	fanout   [256]uint32
}

func (p *pack) open() error {
	p.once.Do(func() {
		if p.idx, p.err = p.store.fsys.Open(p.name + ".idx"); p.err != nil {
			return
		}
		head := make([]byte, 8+256*4)
		if _, p.err = p.idx.ReadAt(head, 0); p.err != nil {
			return
		}
		if !bytes.Equal(head[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
			p.err = fmt.Errorf("%s.idx: not a pack index of version 2", p.name)
			return
		}
		for i := range p.fanout {
			p.fanout[i] = binary.BigEndian.Uint32(head[8+4*i:])
		}
		p.pck, p.err = p.store.fsys.Open(p.name + ".pack")
	})
	return p.err
}

func (p *pack) count() int { return int(p.fanout[255]) }

// name is the i-th id of the index.
func (p *pack) id(i int) ([]byte, error) {
	n := p.store.hashLen()
	b := make([]byte, n)
	_, err := p.idx.ReadAt(b, int64(8+256*4+i*n))
	return b, err
}

// search is the first index of the pack's ids (those starting with the
// byte first, by the fan-out table) for which atOrAfter is true — the ids
// are sorted — and the end of that byte's run.
func (p *pack) search(first byte, atOrAfter func(id []byte) bool) (int, int, error) {
	lo := 0
	if first > 0 {
		lo = int(p.fanout[first-1])
	}
	hi := int(p.fanout[first])
	var ferr error
	i := lo + sort.Search(hi-lo, func(k int) bool {
		b, err := p.id(lo + k)
		if err != nil {
			ferr = err
			return true
		}
		return atOrAfter(b)
	})
	return i, hi, ferr
}

// find lists the full ids of the pack that start with the hex prefix.
func (p *pack) find(prefix string) ([]string, error) {
	if err := p.open(); err != nil {
		return nil, err
	}
	first, err := hex.DecodeString(prefix[:2])
	if err != nil {
		return nil, err
	}
	i, hi, err := p.search(first[0], func(b []byte) bool { return hex.EncodeToString(b) >= prefix })
	var out []string
	for ; i < hi && err == nil; i++ {
		b, err := p.id(i)
		if err != nil {
			return nil, err
		}
		h := hex.EncodeToString(b)
		if !strings.HasPrefix(h, prefix) {
			break
		}
		out = append(out, h)
	}
	return out, err
}

// offset is where the object with the full id starts in the pack.
func (p *pack) offset(id []byte) (int64, bool, error) {
	if err := p.open(); err != nil {
		return 0, false, err
	}
	i, hi, err := p.search(id[0], func(b []byte) bool { return bytes.Compare(b, id) >= 0 })
	if err != nil || i >= hi {
		return 0, false, err
	}
	if b, err := p.id(i); err != nil || !bytes.Equal(b, id) {
		return 0, false, err
	}
	n := p.count()
	hl := p.store.hashLen()
	offs := int64(8 + 256*4 + n*hl + n*4)
	var w [8]byte
	if _, err := p.idx.ReadAt(w[:4], offs+int64(4*i)); err != nil {
		return 0, false, err
	}
	off := binary.BigEndian.Uint32(w[:4])
	if off&0x80000000 == 0 {
		return int64(off), true, nil
	}
	if _, err := p.idx.ReadAt(w[:8], offs+int64(4*n)+8*int64(off&0x7fffffff)); err != nil {
		return 0, false, err
	}
	return int64(binary.BigEndian.Uint64(w[:8])), true, nil
}

// readAt reads the pack's object at off, resolving deltas.
func (p *pack) readAt(off int64, depth int) (int, []byte, error) {
	if depth > maxDepth {
		return 0, nil, fmt.Errorf("a delta chain deeper than %d", maxDepth)
	}
	r := bufio.NewReader(io.NewSectionReader(p.pck, off, 1<<62))
	c, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	typ := int(c>>4) & 7
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = r.ReadByte(); err != nil || shift > 56 {
			return 0, nil, fmt.Errorf("a damaged pack entry at %d", off)
		}
		size |= int64(c&0x7f) << shift
	}
	var base func() (int, []byte, error)
	switch typ {
	case objCommit, objTree, objBlob, objTag:
	case objOfsDelta:
		c, err := r.ReadByte()
		rel := int64(c & 0x7f)
		for err == nil && c&0x80 != 0 && rel < 1<<56 {
			c, err = r.ReadByte()
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if err != nil || rel <= 0 || rel > off {
			return 0, nil, fmt.Errorf("a damaged delta base offset at %d", off)
		}
		base = func() (int, []byte, error) { return p.readAt(off-rel, depth+1) }
	case objRefDelta:
		id := make([]byte, p.store.hashLen())
		if _, err := io.ReadFull(r, id); err != nil {
			return 0, nil, err
		}
		base = func() (int, []byte, error) { return p.store.read(id, depth+1) }
	default:
		return 0, nil, fmt.Errorf("a pack entry of unknown type %d at %d", typ, off)
	}
	z, err := zlib.NewReader(r)
	if err != nil {
		return 0, nil, fmt.Errorf("a damaged pack entry at %d: %v", off, err)
	}
	defer z.Close()
	data, err := p.store.inflateN(z, size)
	if err != nil || base == nil {
		return typ, data, err
	}
	btyp, src, err := base()
	if err != nil {
		return 0, nil, err
	}
	if _, dst, err := patchparse.DeltaSizes(data); err == nil && p.store.max > 0 && int64(dst) > p.store.max {
		return 0, nil, fmt.Errorf("an object of %d bytes, over the limit of %d", dst, p.store.max)
	}
	out, err := patchparse.ApplyDelta(src, data)
	return btyp, out, err
}
