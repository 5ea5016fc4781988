package node

import (
	"net/http"
	"strings"

	"github.com/rs/zerolog"
)

// A node logs through one zerolog logger, shared by every component. Its
// level is the process's (zerolog's global level): nodetool
// setlogginglevel changes it at run time, getlogginglevels shows it, as
// logback's ROOT logger, which is what Cassandra's commands act on.

// levelNames are logback's names of zerolog's levels.
var levelNames = map[zerolog.Level]string{zerolog.TraceLevel: "TRACE", zerolog.DebugLevel: "DEBUG", zerolog.InfoLevel: "INFO",
	zerolog.WarnLevel: "WARN", zerolog.ErrorLevel: "ERROR", zerolog.FatalLevel: "ERROR", zerolog.PanicLevel: "ERROR",
	zerolog.Disabled: "OFF", zerolog.NoLevel: "ALL"}

// parseLevel reads a logback level name, in any case.
func parseLevel(name string) (zerolog.Level, bool) {
	switch strings.ToUpper(name) {
	case "ALL", "TRACE":
		return zerolog.TraceLevel, true
	case "DEBUG":
		return zerolog.DebugLevel, true
	case "INFO":
		return zerolog.InfoLevel, true
	case "WARN":
		return zerolog.WarnLevel, true
	case "ERROR":
		return zerolog.ErrorLevel, true
	case "OFF":
		return zerolog.Disabled, true
	}
	return 0, false
}

// AdminLoggingLevel is one logger of nodetool getlogginglevels.
type AdminLoggingLevel struct {
	Logger string `json:"logger"`
	Level  string `json:"level"`
}

func (n *Node) adminLoggingLevels(*http.Request) (any, error) {
	return []AdminLoggingLevel{{"ROOT", levelNames[zerolog.GlobalLevel()]}}, nil
}

// adminSetLoggingLevel sets the level of the node's logger, named ROOT or
// org.apache.cassandra (the loggers Cassandra's commands name); with
// neither logger nor level it goes back to the level the node started
// with. An unknown level is refused (logback would take it as DEBUG).
func (n *Node) adminSetLoggingLevel(r *http.Request) (any, error) {
	logger, name := r.URL.Query().Get("logger"), r.URL.Query().Get("level")
	if logger == "" && name == "" {
		zerolog.SetGlobalLevel(n.startLogLevel)
		n.cfg.Logger.Info().Str("level", levelNames[n.startLogLevel]).Msg("node: log level reset to the one the node started with")
		return nil, nil
	}
	if logger != "ROOT" && logger != "org.apache.cassandra" {
		return nil, badRequest("Sibyl logs through one logger, ROOT (or org.apache.cassandra): no logger %q", logger)
	}
	level, ok := parseLevel(name)
	if !ok {
		return nil, badRequest("%q is not a log level: one of TRACE, DEBUG, INFO, WARN, ERROR, OFF", name)
	}
	zerolog.SetGlobalLevel(level)
	n.cfg.Logger.Info().Str("level", levelNames[level]).Msg("node: log level set")
	return nil, nil
}
