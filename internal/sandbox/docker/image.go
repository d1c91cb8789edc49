package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

// DefaultImage is the neutral name hunk suggests for the small image
// MakeImage makes: one no registry holds, so that it never stands in for a
// real image.
const DefaultImage = "hunk-sandbox:latest"

// madeComment starts the comment of every image MakeImage makes.
const madeComment = "hunk exec --make-image"

// MakeImage imports a small image named name into the engine, offline (no
// registry, no Dockerfile, no docker CLI): a root filesystem holding a
// statically linked busybox with its applets linked in /bin (/usr/bin and
// /sbin point there), /etc/passwd and /etc/group, and empty /tmp, /proc,
// /sys, /dev. busybox is the host's static busybox ("" = `busybox` on PATH,
// then /bin/busybox; Debian: apt-get install busybox-static). It returns
// the image id. The name must be one of hunk's own (its repository's last
// part starting with "hunk-") unless force: a busybox under a real image's
// name (node:22) would stand in for it for every tool using the engine.
func (d *Docker) MakeImage(ctx context.Context, name, busybox string, force bool) (string, error) {
	if name == "" {
		return "", result.Usagef("--make-image needs an image name, e.g. %s", DefaultImage)
	}
	if repo, _ := splitRef(name); !force && !strings.HasPrefix(path.Base(repo), "hunk-") {
		return "", result.Usagef("--make-image %s: a busybox image under that name would stand in for the real %s for every tool using the engine", name, repo).
			WithHint("name it hunk-… (e.g. " + DefaultImage + "), or add --force if that name is really meant for it")
	}
	bb, err := findStaticBusybox(busybox)
	if err != nil {
		return "", err
	}
	rootfs, err := busyboxRootfs(bb)
	if err != nil {
		return "", result.Errorf(result.IOError, "building the root filesystem: %v", err)
	}
	e, err := d.engine()
	if err != nil {
		return "", result.Errorf(result.SandboxUnavailable, "%v", err)
	}
	var have struct{ Comment string }
	if err := e.do(ctx, http.MethodGet, "/images/"+name+"/json", nil, nil, &have); err == nil && !strings.HasPrefix(have.Comment, madeComment) {
		// A busybox under a real image's name (golang:1.26) would shadow
		// it for every tool that uses the engine.
		return "", result.Errorf(result.InvalidArgument, "--make-image %s: the engine has an image of that name that hunk did not make; it stays as it is", name).
			WithHint("name the small image something of its own, e.g. " + DefaultImage)
	}
	repo, tag := splitRef(name)
	if tag == "" {
		tag = "latest"
	}
	q := url.Values{
		"fromSrc": {"-"}, "repo": {repo}, "tag": {tag},
		"changes": {"ENV PATH=/usr/local/bin:/usr/bin:/bin", `CMD ["/bin/sh"]`},
		"message": {madeComment + " (busybox " + bb + ")"},
	}
	resp, err := e.send(ctx, http.MethodPost, "/images/create", q, bytes.NewReader(rootfs), "application/x-tar")
	if err != nil {
		return "", engineFailure(e, sandbox.Spec{}, err)
	}
	defer resp.Body.Close()
	var id string
	dec := json.NewDecoder(resp.Body)
	for {
		var m struct{ Status, Error string }
		if err := dec.Decode(&m); err != nil {
			break
		}
		if m.Error != "" {
			return "", result.Errorf(result.SandboxUnavailable, "importing %s: %s", name, m.Error)
		}
		if strings.HasPrefix(m.Status, "sha256:") {
			id = m.Status
		}
	}
	return id, nil
}

// findStaticBusybox returns the path of a statically linked busybox (one
// that runs in an otherwise empty root filesystem).
func findStaticBusybox(path string) (string, error) {
	var cands []string
	if path != "" {
		cands = []string{path}
	} else {
		if p, err := exec.LookPath("busybox"); err == nil {
			cands = append(cands, p)
		}
		cands = append(cands, "/bin/busybox", "/usr/bin/busybox")
	}
	var why []string
	for _, p := range cands {
		dynamic, err := elfDynamic(p)
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		if dynamic {
			why = append(why, p+" is dynamically linked")
			continue
		}
		return p, nil
	}
	return "", result.Errorf(result.NotFound, "no statically linked busybox found (%s)", strings.Join(why, "; ")).
		WithHint("install one (Debian/Ubuntu: apt-get install busybox-static), or import any root filesystem yourself: tar -C ROOTFS -c . | docker import - NAME")
}

// elfDynamic reports whether the ELF executable at path asks for a program
// interpreter (PT_INTERP), i.e. is dynamically linked. (Read by hand: the
// debug/elf package would add half a megabyte to every hunk start.)
func elfDynamic(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var h [64]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:4]) != "\x7fELF" {
		return false, errors.New("not an ELF executable")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if h[5] == 2 {
		bo = binary.BigEndian
	}
	var off int64
	var size, num int
	if h[4] == 2 { // 64-bit
		off, size, num = int64(bo.Uint64(h[0x20:])), int(bo.Uint16(h[0x36:])), int(bo.Uint16(h[0x38:]))
	} else {
		off, size, num = int64(bo.Uint32(h[0x1c:])), int(bo.Uint16(h[0x2a:])), int(bo.Uint16(h[0x2c:]))
	}
	if size < 4 || size > 256 || num > 4096 {
		return false, errors.New("malformed ELF program headers")
	}
	ph := make([]byte, size*num)
	if _, err := f.ReadAt(ph, off); err != nil {
		return false, fmt.Errorf("reading ELF program headers: %v", err)
	}
	for i := 0; i < num; i++ {
		if bo.Uint32(ph[i*size:]) == 3 { // PT_INTERP
			return true, nil
		}
	}
	return false, nil
}

// busyboxRootfs is the tar of the image's root filesystem.
func busyboxRootfs(bb string) ([]byte, error) {
	bin, err := os.ReadFile(bb)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %v", bb, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	add := func(h *tar.Header, body []byte) error {
		h.ModTime = now
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	for _, d := range []struct {
		name string
		mode int64
	}{{"bin", 0o755}, {"etc", 0o755}, {"tmp", 0o1777}, {"proc", 0o555}, {"sys", 0o555}, {"dev", 0o755}, {"root", 0o700}, {"usr", 0o755}, {"usr/local", 0o755}, {"usr/local/bin", 0o755}} {
		if err := add(&tar.Header{Typeflag: tar.TypeDir, Name: d.name + "/", Mode: d.mode}, nil); err != nil {
			return nil, err
		}
	}
	for _, l := range [][2]string{{"sbin", "bin"}, {"usr/bin", "../bin"}, {"usr/sbin", "../bin"}} {
		if err := add(&tar.Header{Typeflag: tar.TypeSymlink, Name: l[0], Linkname: l[1]}, nil); err != nil {
			return nil, err
		}
	}
	if err := add(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bin))}, bin); err != nil {
		return nil, err
	}
	for _, a := range strings.Fields(string(out)) {
		if a == "busybox" || strings.Contains(a, "/") {
			continue
		}
		if err := add(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox"}, nil); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n",
		"etc/group":  "root:x:0:\nnogroup:x:65534:\n",
	}
	for _, n := range []string{"etc/passwd", "etc/group"} {
		if err := add(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(files[n]))}, []byte(files[n])); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// HasImage reports whether the engine has image name.
func (d *Docker) HasImage(ctx context.Context, name string) (bool, error) {
	e, err := d.engine()
	if err != nil {
		return false, err
	}
	err = e.do(ctx, http.MethodGet, "/images/"+name+"/json", nil, nil, nil)
	if isStatus(err, http.StatusNotFound) {
		return false, nil
	}
	return err == nil, err
}
