package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newSessionCmd(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "session",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("session: not built yet")
		},
	}
}
