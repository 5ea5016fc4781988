package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/tools/cqlsh"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newCqlshCommand() *cobra.Command {
	var (
		execute, file, keyspace, user, password string
		requestTimeout, connectTimeout, proto   int
		color, noColor, tty                     bool
	)
	cmd := &cobra.Command{
		Use:   "cqlsh [host [port]]",
		Short: "The CQL shell, as Cassandra's cqlsh",
		Args:  cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, port := "127.0.0.1", 9042
			if v := os.Getenv("CQLSH_HOST"); v != "" {
				host = v
			}
			if v, err := strconv.Atoi(os.Getenv("CQLSH_PORT")); err == nil {
				port = v
			}
			if len(args) > 0 {
				host = args[0]
			}
			if len(args) > 1 {
				p, err := strconv.Atoi(args[1])
				if err != nil {
					return fmt.Errorf("port: %q is not a number", args[1])
				}
				port = p
			}
			cluster := gocql.NewCluster(host)
			cluster.Port = port
			cluster.Keyspace = keyspace
			cluster.Timeout = time.Duration(requestTimeout) * time.Second
			cluster.ConnectTimeout = time.Duration(connectTimeout) * time.Second
			cluster.ProtoVersion = proto
			cluster.DisableInitialHostLookup = true
			cluster.NumConns = 1
			if user != "" {
				cluster.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
			}
			interactive := execute == "" && file == "" && (tty || term.IsTerminal(int(os.Stdin.Fd())))
			// As cqlsh: colour when asked, or when the output is a terminal
			// that is not dumb, unless told never to.
			useColor := color || term.IsTerminal(int(os.Stdout.Fd())) && os.Getenv("TERM") != "" && os.Getenv("TERM") != "dumb"
			if noColor {
				useColor = false
			}
			sh, err := cqlsh.New(cqlsh.Options{Host: host, Port: port, Cluster: cluster, Out: cmd.OutOrStdout(),
				Err: cmd.ErrOrStderr(), TTY: interactive, Color: useColor})
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "Connection error: %v\n", err)
				os.Exit(1)
			}
			defer sh.Close()
			switch {
			case execute != "":
				st := strings.TrimSpace(execute)
				if !strings.HasSuffix(st, ";") {
					st += ";"
				}
				sh.RunInput(strings.NewReader(st), "<stdin>")
			case file != "":
				f, err := os.Open(file)
				if err != nil {
					return err
				}
				defer f.Close()
				sh.RunInput(f, file)
			case interactive:
				sh.Banner()
				home, _ := os.UserHomeDir()
				history := filepath.Join(home, ".cassandra", "cqlsh_history")
				_ = os.MkdirAll(filepath.Dir(history), 0o700)
				if err := sh.Interactive(history); err != nil {
					return err
				}
			default:
				sh.RunInput(os.Stdin, "<stdin>")
			}
			if sh.Failed() && !interactive {
				os.Exit(2)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&execute, "execute", "e", "", "execute the statement and quit")
	f.StringVarP(&file, "file", "f", "", "execute the statements of a file and quit")
	f.StringVarP(&keyspace, "keyspace", "k", "", "the keyspace to use")
	f.StringVarP(&user, "username", "u", "", "the user to authenticate as")
	f.StringVarP(&password, "password", "p", "", "the password to authenticate with")
	f.IntVar(&requestTimeout, "request-timeout", 10, "request timeout in seconds")
	f.IntVar(&connectTimeout, "connect-timeout", 5, "connect timeout in seconds")
	f.IntVar(&proto, "protocol-version", 4, "the native protocol version (3, 4; gocql does not frame v5)")
	f.BoolVarP(&color, "color", "C", false, "always colour the output")
	f.BoolVar(&noColor, "no-color", false, "never colour the output")
	f.BoolVarP(&tty, "tty", "t", false, "force tty mode")
	return cmd
}
