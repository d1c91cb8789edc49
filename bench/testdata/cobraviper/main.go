// Command cobraviper is the yardstick of hunk's start-up: the least a
// cobra and viper program does (one command, one flag bound to viper),
// built as hunk is (bench/startup_test.go, BenchmarkStartupVsCobraViper).
package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

func main() {
	v := viper.New()
	root := &cobra.Command{Use: "cv", Version: "1", RunE: func(c *cobra.Command, a []string) error { return nil }}
	root.PersistentFlags().Bool("json", false, "")
	_ = v.BindPFlags(root.PersistentFlags())
	root.SetArgs(os.Args[1:])
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
