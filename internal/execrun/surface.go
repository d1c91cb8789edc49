package execrun

import (
	"fmt"
	"strings"
	"time"
)

// Surface says exec's advice in the words of the surface that shows a
// result: the command line's flags to a person, a tool's arguments to a
// model — who can change only what a call may ask, and needs to hear what
// only the person running hunk can change. The zero Surface is the
// command line's.
type Surface struct {
	// Read says how to read a stored stream (nil: hunk read's flags).
	Read Refer
	// Longer says how to give a command more time than limit, the
	// timeout it ran under (nil: the --timeout flag).
	Longer func(limit time.Duration) string
	// Setting says how to turn on what the command lacked — flag, the
	// command line's, and key, the configuration's ("" none) (nil: add
	// the flag).
	Setting func(flag, key string) string
}

func (s Surface) read() Refer {
	if s.Read == nil {
		return ReadFlags
	}
	return s.Read
}

func (s Surface) longer(limit time.Duration) string {
	if s.Longer == nil {
		return fmt.Sprintf("give it more time with --timeout (exec.timeout), e.g. --timeout %s; 0 for none", short(suggest(limit)))
	}
	return s.Longer(limit)
}

func (s Surface) setting(flag, key string) string {
	if s.Setting != nil {
		return s.Setting(flag, key)
	}
	if key != "" {
		return fmt.Sprintf("add %s (config %s)", flag, key)
	}
	return "add " + flag
}

// suggest is a timeout worth trying after limit: the next of 5m, 10m, 30m, 1h.
func suggest(limit time.Duration) time.Duration {
	for _, d := range []time.Duration{5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour} {
		if d > limit {
			return d
		}
	}
	return 2 * limit
}

// ToolSurface is the surface of a tool call (hunk mcp, hunk call's hunk
// shape) whose server allows timeouts up to most (0: none): the read
// tool's execOutput, the call's timeoutSeconds, and for a setting, the
// person running hunk.
func ToolSurface(most time.Duration, read Refer) Surface {
	return Surface{
		Read: read,
		Longer: func(limit time.Duration) string {
			if most == 0 || limit < most {
				if most == 0 {
					return fmt.Sprintf("ask for more time with the exec tool's timeoutSeconds, e.g. %g", suggest(limit).Seconds())
				}
				return fmt.Sprintf("ask for more time with the exec tool's timeoutSeconds, up to this server's %g", most.Seconds())
			}
			return fmt.Sprintf("%g seconds is the most this server allows a command; the person running hunk sets it (hunk mcp --timeout, config exec.timeout or tools.timeout)", most.Seconds())
		},
		Setting: func(flag, key string) string {
			if key != "" {
				flag += ", config " + key
			}
			return fmt.Sprintf("a tool call cannot change that: the person running hunk sets it (hunk mcp %s)", flag)
		},
	}
}

// short is d as a flag takes it: "5m", "1h", "90s".
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
