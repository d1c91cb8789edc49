package sandboxtest

import "net"

// Serve accepts connections on ln until it is closed, writing greeting (if
// any) to each and closing it.
func Serve(ln net.Listener, greeting []byte) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if greeting != nil {
				_, _ = c.Write(greeting)
			}
			c.Close()
		}
	}()
}
