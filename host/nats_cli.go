package host

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/zealgo/zealgo/internal/natsrv"
)

// NATSTokenEnv is the environment variable holding the token that the
// nats command's server wants from its clients (who then connect to
// nats://TOKEN@host:port); none when it is empty.
const NATSTokenEnv = "ZEALGO_NATS_TOKEN"

// natsFlags adds serve's NATS flags to fs; the returned func applies them
// after parsing. Without --nats, Config.NATS.URL or $ZEALGO_NATS, serve
// uses the embedded server.
func (a *App) natsFlags(fs *flag.FlagSet) func() {
	var url string
	fs.StringVar(&url, "nats", "", "NATS JetStream for tasks at `URL`: embedded, off, or nats://[token@]host:port, a server "+
		"that several instances share (default Config.NATS.URL, else $"+NATSEnv+", else embedded)")
	fs.StringVar(&a.cfg.NATS.Instance, "instance", a.cfg.NATS.Instance, "this instance's `name` on a shared NATS, "+
		"stable across restarts (default: the name kept in <data>/instance)")
	fs.DurationVar(&a.cfg.NATS.AckWait, "task-ack-wait", a.cfg.NATS.AckWait, "on NATS, how long a task may go "+
		"without news from its worker before it is delivered again (default 30s)")
	fs.IntVar(&a.cfg.NATS.MaxDeliver, "task-max-deliver", a.cfg.NATS.MaxDeliver, "on NATS, how many times a task is "+
		"delivered before it fails with ErrTaskDeliveries (default 5)")
	fs.StringVar(&a.cfg.Session.Store, "session-store", a.cfg.Session.Store, "where sessions live: file, redis or nats "+
		"(default: redis when set, else nats with a shared --nats URL, else file)")
	return func() {
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "nats" {
				a.cfg.NATS.URL = url
			}
		})
		if a.cfg.NATS.URL == "" && os.Getenv(NATSEnv) == "" {
			a.cfg.NATS.URL = NATSEmbedded
		}
	}
}

func init() {
	commands["nats"] = command{"run the embedded NATS server alone, for several instances on this machine", (*App).cmdNATS}
}

// cmdNATS runs the NATS server that zealgo embeds, alone, until ctx is
// done: several instances on one machine then share it with
// --nats nats://127.0.0.1:4222 (nats://TOKEN@... with $ZEALGO_NATS_TOKEN).
func (a *App) cmdNATS(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zealgo nats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:4222", "loopback address to listen on")
	data := fs.String("data", "data", "data directory; the JetStream store goes under DIR/nats")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	host, portStr, err := net.SplitHostPort(*addr)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil {
		fmt.Fprintf(stderr, "zealgo nats: --addr %q: want HOST:PORT\n", *addr)
		return 2
	}
	log := a.cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	dir := filepath.Join(*data, "nats")
	srv, err := natsrv.Start(natsrv.Config{DataDir: dir, Host: host, Port: port, Token: os.Getenv(NATSTokenEnv), Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	log.Info("zealgo nats serving", "url", srv.URL(), "data", dir, "token", os.Getenv(NATSTokenEnv) != "")
	<-ctx.Done()
	srv.Shutdown()
	log.Info("zealgo nats stopped")
	return 0
}
