package learn

import (
	"strconv"

	"github.com/zealgo/zealgo/host"
)

// NotesRoom is the room of an account's open notes pages
// (api/learn/live.go): each page joins it, and a change to the account's
// notes is broadcast there.
func NotesRoom(userID int64) string { return "notes:" + strconv.FormatInt(userID, 10) }

// NotesChanged tells the account's open notes pages, in every instance,
// that its notes changed: they fetch the list again
// (public/learn/live.js). A failure is logged; the change itself stands.
func NotesChanged(api *host.API, userID int64) {
	if err := api.App().Broadcast(NotesRoom(userID), "changed"); err != nil {
		api.App().Logger().Warn("notes: live update not sent", "request_id", api.RequestID(), "err", err)
	}
}
