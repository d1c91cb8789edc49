package cmd

import (
	"io"
	"reflect"
	"testing"

	"github.com/hunk-dev/hunk/internal/read"
)

func TestReadFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		cfg   ReadConfig
		want  ReadOptions
		usage bool
	}{
		{name: "defaults", args: []string{"a.go"}, cfg: ReadConfig{Limit: 2000, MaxBytes: 51200},
			want: ReadOptions{Path: "a.go", Options: read.Options{Offset: 1, Column: 1, Limit: 2000, MaxBytes: 51200}}},
		{name: "config", args: []string{"a.go"}, cfg: ReadConfig{Limit: 5, MaxBytes: 100},
			want: ReadOptions{Path: "a.go", Options: read.Options{Offset: 1, Column: 1, Limit: 5, MaxBytes: 100}}},
		{name: "flags beat config", args: []string{"-n", "--offset", "7", "--limit", "3", "--max-bytes", "64", "--column", "9", "a.go"},
			cfg:  ReadConfig{Limit: 5, MaxBytes: 100},
			want: ReadOptions{Path: "a.go", Options: read.Options{Offset: 7, Column: 9, Limit: 3, MaxBytes: 64, LineNumbers: true}}},
		{name: "offset 0 is 1", args: []string{"--offset", "0", "a.go"}, cfg: ReadConfig{Limit: 1, MaxBytes: 10},
			want: ReadOptions{Path: "a.go", Options: read.Options{Offset: 1, Column: 1, Limit: 1, MaxBytes: 10}}},
		{name: "limit 0", args: []string{"--limit", "0", "a.go"}, usage: true},
		{name: "negative offset", args: []string{"--offset", "-2", "a.go"}, usage: true},
		{name: "no path", args: nil, usage: true},
		{name: "two paths", args: []string{"a", "b"}, usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &App{Cfg: Config{Read: tt.cfg}, Stdout: io.Discard, Stderr: io.Discard}
			var got *ReadOptions
			c := newReadCmd(app, func(_ *App, o *ReadOptions) error { got = o; return nil })
			c.SetArgs(tt.args)
			c.SetOut(io.Discard)
			c.SetErr(io.Discard)
			c.SilenceErrors, c.SilenceUsage = true, true
			err := c.Execute()
			if tt.usage {
				if err == nil {
					t.Fatalf("no error, options %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}
