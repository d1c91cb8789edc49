package serve

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// A request's body is read whole before its call can be refused for want
// of a slot, so bodies being read are bounded apart: at most MaxCalls at
// once (the calls' own bound), each within MaxBody. A request that finds
// every one taken is refused (503) before a byte of its body is read; a
// body's slot is free again once it was read (its call, if any, then
// holds a call's slot) or its request ended. The memory bodies take is
// then at most (reading + running) x MaxBody, whatever the clients send.

// admitBody takes a reading slot for r's body; ok false: every slot is
// taken, and the client has its 503.
func (sv *server) admitBody(w http.ResponseWriter, r *http.Request) (done func(), ok bool) {
	if sv.bodies == nil || r.Method != http.MethodPost || r.ContentLength == 0 {
		return func() {}, true
	}
	select {
	case sv.bodies <- struct{}{}:
	default:
		w.Header().Set("Retry-After", "1")
		sv.fail(w, r, http.StatusServiceUnavailable, fmt.Sprintf("Service Unavailable: %d requests are being read (--max-calls); this one was not read nor run: retry it", cap(sv.bodies)))
		return nil, false
	}
	var once sync.Once
	free := func() { once.Do(func() { <-sv.bodies }) }
	r.Body = &freeingBody{ReadCloser: r.Body, free: free}
	return free, true
}

// freeingBody frees its reading slot once read to its end.
type freeingBody struct {
	io.ReadCloser
	free func()
}

func (b *freeingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.free()
	}
	return n, err
}
