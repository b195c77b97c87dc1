package host

import "errors"

// The handler's side of real time: API.WebSocket (websocket.go) and
// API.SSE (sse.go), values of the return contract.

// WebSocket answers the request by upgrading it to a WebSocket and
// running fn with the connection: the handler returns its result.
//
//	var get = func(api *host.API) any {
//		return api.WebSocket(func(ws *host.WebSocket) error {
//			for {
//				msg, err := ws.Read()
//				if err != nil {
//					return nil // the client went away
//				}
//				if err := ws.Write("echo: " + msg); err != nil {
//					return nil
//				}
//			}
//		})
//	}
//
// When fn returns nil the connection closes with status 1000; an error,
// or a panic, is logged with the request id and closes it with 1011.
// fn may use the handler's API (session, auth hooks, Param) as the
// handler does. A request that is no handshake is answered 426
// upgrade_required, a browser's from an origin other than the request's
// host and Config.TrustedOrigins 403 cross_origin_request, both in the
// JSON envelope. See Config.Realtime for the limits.
func (a *API) WebSocket(fn func(ws *WebSocket) error) any {
	h := &rtOf(a.app).live
	if e := h.checkHandshake(a.r); e != nil {
		return e
	}
	if fn == nil {
		return errors.New("zealgo: API.WebSocket: the func is nil")
	}
	return &wsUpgrade{hub: h, fn: fn}
}

// SSE answers the request with a Server-Sent Events stream
// (text/event-stream) and runs fn with it: the handler returns its
// result.
//
//	var get = func(api *host.API) any {
//		return api.SSE(func(s *host.SSE) error {
//			for i := 1; ; i++ {
//				if err := s.Send(host.Event{ID: strconv.Itoa(i), Data: "tick"}); err != nil {
//					return nil // the client went away
//				}
//				select {
//				case <-s.Context().Done():
//					return nil
//				case <-time.After(time.Second):
//				}
//			}
//		})
//	}
//
// The stream ends when fn returns, when the client goes away (Context is
// done, Send fails) or at shutdown. A comment line goes out when nothing
// was sent for Config.Realtime.Heartbeat; a stream that sent no event for
// Config.Realtime.IdleTimeout is ended. An error or a panic of fn is
// logged with the request id.
//
//go:noinline
func (a *API) SSE(fn func(s *SSE) error) any {
	if fn == nil {
		return errors.New("zealgo: API.SSE: the func is nil")
	}
	return &sseStream{hub: &rtOf(a.app).live, fn: fn}
}
