package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newSQLCmd(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "sql",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("sql: not built yet")
		},
	}
}
