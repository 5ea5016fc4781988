package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/tools/cqlsh"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newCqlshCommand() *cobra.Command {
	var (
		execute, file, keyspace, user, password, rcPath string
		requestTimeout, connectTimeout, proto           int
		color, noColor, tty, useSSL                     bool
	)
	cmd := &cobra.Command{
		Use:   "cqlsh [host [port]]",
		Short: "The CQL shell, as Cassandra's cqlsh",
		Args:  cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rcPath == "" {
				home, _ := os.UserHomeDir()
				rcPath = filepath.Join(home, ".cassandra", "cqlshrc")
			}
			rc, err := cqlsh.ReadRC(rcPath)
			if err != nil {
				return fmt.Errorf("cqlshrc: %w", err)
			}
			host := "127.0.0.1"
			if v := rc.Get("connection", "hostname"); v != "" {
				host = v
			}
			port, err := rc.Int("connection", "port", 9042)
			if err != nil {
				return fmt.Errorf("cqlshrc: %w", err)
			}
			if !cmd.Flags().Changed("ssl") {
				if useSSL, err = rc.Bool("connection", "ssl", false); err != nil {
					return fmt.Errorf("cqlshrc: %w", err)
				}
			}
			if user == "" {
				user, password = rc.Get("authentication", "username"), rc.Get("authentication", "password")
			}
			maxTraceWait, err := rc.Seconds("tracing", "max_trace_wait", 10*time.Second)
			if err != nil {
				return fmt.Errorf("cqlshrc: %w", err)
			}
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
			if useSSL {
				opts, err := sslOptions(rc)
				if err != nil {
					return err
				}
				cluster.SslOpts = opts
			}
			interactive := execute == "" && file == "" && (tty || term.IsTerminal(int(os.Stdin.Fd())))
			// As cqlsh: colour when asked, or when the output is a terminal
			// that is not dumb, unless told never to.
			useColor := color || term.IsTerminal(int(os.Stdout.Fd())) && os.Getenv("TERM") != "" && os.Getenv("TERM") != "dumb"
			if noColor {
				useColor = false
			}
			var readPassword func() (string, error)
			if term.IsTerminal(int(os.Stdin.Fd())) {
				readPassword = func() (string, error) {
					fmt.Fprint(cmd.OutOrStdout(), "Password: ")
					b, err := term.ReadPassword(int(os.Stdin.Fd()))
					fmt.Fprintln(cmd.OutOrStdout())
					return string(b), err
				}
			}
			sh, err := cqlsh.New(cqlsh.Options{Host: host, Port: port, Cluster: cluster, Out: cmd.OutOrStdout(),
				Err: cmd.ErrOrStderr(), TTY: interactive, Color: useColor, MaxTraceWait: maxTraceWait, ReadPassword: readPassword})
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
				sh.RunExecute(st)
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
	f.BoolVar(&useSSL, "ssl", false, "connect with TLS, as the cqlshrc's [ssl] section says")
	f.StringVar(&rcPath, "cqlshrc", "", "the cqlshrc to read (default ~/.cassandra/cqlshrc)")
	return cmd
}

// sslOptions are cqlsh's TLS settings: the cqlshrc's [ssl] section, with
// SSL_CERTFILE and SSL_VALIDATE over it, as cqlsh takes them.
func sslOptions(rc cqlsh.RC) (*gocql.SslOptions, error) {
	validate, err := rc.Bool("ssl", "validate", true)
	if err != nil {
		return nil, fmt.Errorf("cqlshrc: %w", err)
	}
	if v := os.Getenv("SSL_VALIDATE"); v != "" {
		validate = strings.EqualFold(v, "true") || v == "1"
	}
	o := tlsconf.ClientSettings{CAFile: rc.Path("ssl", "certfile"), VerifyServer: validate,
		CertFile: rc.Path("ssl", "usercert"), KeyFile: rc.Path("ssl", "userkey")}
	if v := os.Getenv("SSL_CERTFILE"); v != "" {
		o.CAFile = v
	}
	if validate && o.CAFile == "" {
		return nil, fmt.Errorf("cqlshrc: [ssl] validate is on and no certfile names the authority to check the node's certificate against (or set validate = false)")
	}
	cfg, err := o.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cqlshrc: [ssl]: %w", err)
	}
	// gocql sets InsecureSkipVerify from EnableHostVerification.
	return &gocql.SslOptions{Config: cfg, EnableHostVerification: validate}, nil
}
