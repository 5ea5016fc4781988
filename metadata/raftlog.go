package metadata

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/sibyldb/sibyl/internal/invariants"
)

// raftLogger hands Raft's log lines to zerolog, a level lower than Raft
// gives them (its info lines are elections and configuration changes,
// which this package logs itself where an operator needs them).
type raftLogger struct{ l *zerolog.Logger }

func (r raftLogger) Debug(v ...any)                 { r.l.Trace().Msg(fmt.Sprint(v...)) }
func (r raftLogger) Debugf(format string, v ...any) { r.l.Trace().Msgf(format, v...) }
func (r raftLogger) Info(v ...any)                  { r.l.Debug().Msg(fmt.Sprint(v...)) }
func (r raftLogger) Infof(format string, v ...any)  { r.l.Debug().Msgf(format, v...) }
func (r raftLogger) Warning(v ...any)               { r.l.Info().Msg(fmt.Sprint(v...)) }
func (r raftLogger) Warningf(format string, v ...any) {
	r.l.Info().Msgf(format, v...)
}
func (r raftLogger) Error(v ...any)                 { r.l.Error().Msg(fmt.Sprint(v...)) }
func (r raftLogger) Errorf(format string, v ...any) { r.l.Error().Msgf(format, v...) }
func (r raftLogger) Fatal(v ...any)                 { r.Panic(v...) }
func (r raftLogger) Fatalf(format string, v ...any) { r.Panicf(format, v...) }
func (r raftLogger) Panic(v ...any) {
	panic(invariants.Failf("raft: %s", fmt.Sprint(v...)))
}
func (r raftLogger) Panicf(format string, v ...any) {
	panic(invariants.Failf("raft: "+format, v...))
}
