package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newMockCmd(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "mock",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("mock: not built yet")
		},
	}
}
