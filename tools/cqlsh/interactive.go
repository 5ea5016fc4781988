package cqlsh

import (
	"errors"
	"fmt"
	"io"

	"github.com/chzyer/readline"
)

// Interactive reads statements from the terminal, with line editing and
// history (kept in historyFile), until EXIT, QUIT or end of input.
func (s *Shell) Interactive(historyFile string) error {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:       s.Prompt(false),
		HistoryFile:  historyFile,
		AutoComplete: &completer{schema: driverSchema{s}, keyspace: func() string { return s.keyspace }},
		Stdout:       s.opts.Out,
		Stderr:       s.opts.Err,
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	s.more = func() bool {
		rl.SetPrompt("---MORE---")
		_, err := rl.Readline()
		return err == nil
	}
	var sp splitter
	for {
		rl.SetPrompt(s.Prompt(sp.pending()))
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			sp.reset()
			fmt.Fprintln(s.opts.Out)
			continue
		case errors.Is(err, io.EOF):
			fmt.Fprintln(s.opts.Out)
			return nil
		case err != nil:
			return err
		}
		for _, st := range sp.add(line) {
			if s.Run(st) {
				return nil
			}
		}
	}
}
