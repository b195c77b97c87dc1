package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zealgo/zealgo/internal/jstask"
	"github.com/zealgo/zealgo/internal/natsrv"
)

// tasksCmd is zealgo tasks: the tasks given up on NATS (the dead letters),
// to list, inspect, retry and purge.
func (c *cli) tasksCmd() *cobra.Command {
	var natsURL, data string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "list, inspect, retry or purge the tasks given up on NATS (the dead letters)",
		Long: "The tasks that failed their last attempt, or whose workers died --task-max-deliver times, wait in the\n" +
			"dead-letter stream ZEALGO_DEAD for 7 days. NATS is --nats URL, else $" + NATSEnv + ", else the embedded\n" +
			"server of the running zealgo serve with data directory --data.",
		Args:        c.noArgs,
		Annotations: map[string]string{annotationNoEnv: "true"}, // its flags are not serve's
	}
	cmd.PersistentFlags().StringVar(&natsURL, "nats", "", "the NATS server or cluster, nats://[token@]host:port")
	cmd.PersistentFlags().StringVar(&data, "data", "data", "data directory of the serve whose embedded server to reach")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")
	open := func(cmd *cobra.Command) (*jstask.Dead, func(), error) {
		return openDead(cmd.Context(), natsURL, data)
	}
	sub := func(use, short string, args cobra.PositionalArgs, run func(*cobra.Command, *jstask.Dead, []string) error) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: args, RunE: func(cmd *cobra.Command, a []string) error {
			d, done, err := open(cmd)
			if err == nil {
				defer done()
				err = run(cmd, d, a)
			}
			if err != nil {
				fmt.Fprintln(c.stderr, err)
				c.code = 1
			}
			return nil
		}}
	}
	var all bool
	purge := sub("purge [ID]", "remove a dead task, or all of them with --all", cobra.MaximumNArgs(1),
		func(cmd *cobra.Command, d *jstask.Dead, a []string) error {
			return c.purgeDead(cmd.Context(), d, a, all)
		})
	purge.Flags().BoolVar(&all, "all", false, "remove every dead task")
	cmd.AddCommand(
		sub("list", "list the dead tasks, oldest first", cobra.NoArgs, func(cmd *cobra.Command, d *jstask.Dead, _ []string) error {
			return c.listDead(cmd.Context(), d, asJSON)
		}),
		sub("inspect ID", "print a dead task with its arguments and failure as JSON", cobra.ExactArgs(1),
			func(cmd *cobra.Command, d *jstask.Dead, a []string) error {
				return c.inspectDead(cmd.Context(), d, a[0])
			}),
		sub("retry ID", "dispatch a dead task again, under a new id, and remove it from the dead letters", cobra.ExactArgs(1),
			func(cmd *cobra.Command, d *jstask.Dead, a []string) error { return c.retryDead(cmd.Context(), d, a[0]) }),
		purge,
	)
	return cmd
}

// openDead connects to NATS (natsURL, else $ZEALGO_NATS, else the
// embedded server of data) and opens the dead letters.
func openDead(ctx context.Context, natsURL, data string) (*jstask.Dead, func(), error) {
	if natsURL == "" {
		natsURL = os.Getenv(NATSEnv)
	}
	if natsURL == "" || natsURL == NATSEmbedded {
		b, err := os.ReadFile(clientFile(data))
		if err != nil {
			return nil, nil, fmt.Errorf("zealgo tasks: no --nats URL, and no embedded server recorded in %s (is zealgo serve running with --data %s?): %w",
				clientFile(data), data, err)
		}
		natsURL = strings.TrimSpace(string(b))
	}
	conn, err := natsrv.Connect(ctx, natsURL, natsrv.ConnectOptions{Name: "zealgo tasks", Timeout: 5 * time.Second})
	if err != nil {
		return nil, nil, err
	}
	d, err := jstask.OpenDead(ctx, conn.JS, jstask.Config{})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return d, conn.Close, nil
}

func (c *cli) listDead(ctx context.Context, d *jstask.Dead, asJSON bool) error {
	list, err := d.List(ctx, 0)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(c.stdout).Encode(list)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTASK\tKIND\tDELIVERIES\tGIVEN UP\tERROR")
	for _, t := range list {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\n", t.ID, t.Handler, t.Kind, t.Deliveries, t.Buried.Format(time.RFC3339), oneLine(t.Error, 80))
	}
	return tw.Flush()
}

func (c *cli) inspectDead(ctx context.Context, d *jstask.Dead, arg string) error {
	id, err := deadID(arg)
	if err != nil {
		return err
	}
	t, err := d.Get(ctx, id)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

func (c *cli) retryDead(ctx context.Context, d *jstask.Dead, arg string) error {
	id, err := deadID(arg)
	if err != nil {
		return err
	}
	n, err := d.Retry(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "task %d dispatched again as task %d\n", id, n)
	return nil
}

func (c *cli) purgeDead(ctx context.Context, d *jstask.Dead, args []string, all bool) error {
	var id int64
	switch {
	case len(args) == 1 && !all:
		var err error
		if id, err = deadID(args[0]); err != nil {
			return err
		}
	case len(args) == 0 && all:
	default:
		return errors.New("zealgo tasks purge: give one task id, or --all")
	}
	n, err := d.Purge(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%d dead tasks removed\n", n)
	return nil
}

// deadID parses a task id.
func deadID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("zealgo tasks: %q is no task id", s)
	}
	return id, nil
}

// oneLine cuts s to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
