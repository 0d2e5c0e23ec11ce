package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newDemoCmd(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("demo: not built yet")
		},
	}
}
