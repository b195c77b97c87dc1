package host

import (
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/zealgo/zealgo/internal/jsonenc"
)

// The return contract turns what a handler returned into writes on its
// Response: respond finishes a handler call, writeResult maps one value.
// The Response (response.go) is a buffered http.ResponseWriter and knows
// nothing of the contract.

// Content types the return contract sets when the handler set none.
const (
	contentHTML = "text/html; charset=utf-8"
	contentJSON = "application/json"
)

// respond finishes the response of a handler call that returned v and
// err: a response the handler already sent whole (API.Response, API.Die,
// a guard) stands; otherwise v goes through writeResult; an error is sent
// as fail sends it, or, once the response has begun, cuts the connection.
// Then the buffered response is sent.
func (a *core) respond(api *API, v any, err error) {
	res := api.Res
	if err == nil {
		err = api.err
	}
	if err == nil && api.done {
		if v != nil {
			a.log.Warn("result ignored: the handler already sent its response", "request_id", requestID(api.r))
		}
		_ = res.commit()
		return
	}
	if err == nil {
		err = writeResult(res, api.r, v)
	}
	if err != nil {
		if res.Committed() {
			a.log.Error("handler error after the response began", "request_id", requestID(api.r), "err", err)
			panic(http.ErrAbortHandler)
		}
		a.fail(res, api.r, err)
	}
	_ = res.commit()
}

// writeResult writes v to res under the universal return contract:
//
//	int (any integer kind)           the HTTP status
//	string                           HTML body
//	[]byte                           body as it is (application/octet-stream)
//	func(yield func(string) bool)    streamed, a flush per chunk
//	<-chan string, chan string       streamed, a flush per chunk
//	http.Handler, http.HandlerFunc   served directly
//	*http.Response                   copied directly
//	error                            returned, for a 500
//	nil                              nothing more
//	anything else                    JSON
//
// It returns an error when v cannot be written; nothing is sent then unless
// streaming had begun.
func writeResult(res *Response, r *http.Request, v any) error {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		setDefaultType(res, contentHTML)
		_, err := res.WriteString(x)
		return err
	case []byte:
		setDefaultType(res, "application/octet-stream")
		_, err := res.Write(x)
		return err
	case error:
		return x
	case func(func(string) bool):
		return stream(res, r, x)
	case <-chan string:
		return streamChan(res, r, x)
	case chan string:
		return streamChan(res, r, x)
	case http.Handler:
		return serveHandler(res, r, x)
	case func(http.ResponseWriter, *http.Request):
		return serveHandler(res, r, http.HandlerFunc(x))
	case *http.Response:
		return copyResponse(res, x)
	case bool:
		return writeJSON(res, x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return setStatus(res, rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return setStatus(res, int64(rv.Uint()))
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return fmt.Errorf("zealgo: a handler returned %T, which the return contract does not cover", v)
	}
	return writeJSON(res, v)
}

func setStatus(res *Response, code int64) error {
	if code < 100 || code > 999 {
		return fmt.Errorf("zealgo: a handler returned status %d, which is no HTTP status", code)
	}
	res.WriteHeader(int(code))
	return nil
}

func setDefaultType(res *Response, t string) {
	h := res.Header() // canonical key, without Get's and Set's canonicalisation
	if v := h["Content-Type"]; len(v) == 0 || v[0] == "" {
		h["Content-Type"] = res.vals.one(t) // from the request's batch
	}
}

// writeJSON writes v as JSON, without the newline json.Encoder ends it
// with, straight into the Response's pooled buffer, so that a result
// costs no allocation for its bytes and no copy; once the response has
// begun, through a pooled buffer of its own. Maps and slices of plain
// values are encoded without reflection (internal/jsonenc), the same
// bytes as encoding/json's, which encodes everything else. It writes
// nothing when encoding fails (the encoder writes only what it encoded
// whole).
func writeJSON(res *Response, v any) error {
	if !res.committed {
		if err := encodeJSON(res.buffer(), v); err != nil {
			return err
		}
		setDefaultType(res, contentJSON)
		res.wrote = true
		return res.spill()
	}
	je := bufPool.Get().(*outBuffer)
	defer func() {
		if je.Cap() <= 2*bufferLimit {
			je.Reset()
			bufPool.Put(je)
		}
	}()
	if err := encodeJSON(je, v); err != nil {
		return err
	}
	setDefaultType(res, contentJSON)
	_, err := res.Write(je.Bytes())
	return err
}

// encodeJSON appends v's JSON to b, or nothing if it cannot be encoded.
func encodeJSON(b *outBuffer, v any) error {
	if out, ok := jsonenc.Append(b.AvailableBuffer(), v); ok {
		b.Write(out)
		return nil
	}
	if err := b.enc.Encode(v); err != nil {
		return fmt.Errorf("zealgo: the handler's result cannot be encoded as JSON: %w", err)
	}
	b.Truncate(b.Len() - 1) // the newline
	return nil
}

// stream sends each string seq yields as a chunk, flushed as it comes.
func stream(res *Response, r *http.Request, seq func(func(string) bool)) error {
	setDefaultType(res, contentHTML)
	res.Header().Set("X-Content-Type-Options", "nosniff")
	res.Flush()
	var werr error
	seq(func(chunk string) bool {
		if werr != nil || r.Context().Err() != nil {
			return false
		}
		if _, werr = res.WriteString(chunk); werr != nil {
			return false
		}
		res.Flush()
		return true
	})
	return nil
}

// streamChan sends each string received from ch as a chunk, flushed as it
// comes, until ch is closed or the client goes away.
func streamChan(res *Response, r *http.Request, ch <-chan string) error {
	setDefaultType(res, contentHTML)
	res.Header().Set("X-Content-Type-Options", "nosniff")
	res.Flush()
	done := r.Context().Done()
	for {
		select {
		case chunk, ok := <-ch:
			if !ok {
				return nil
			}
			if _, err := res.WriteString(chunk); err != nil {
				return nil
			}
			res.Flush()
		case <-done:
			return nil
		}
	}
}

// serveHandler hands the request to h, after sending whatever the handler
// had buffered.
func serveHandler(res *Response, r *http.Request, h http.Handler) error {
	w, err := res.handOver()
	if err != nil {
		return nil // the client went away
	}
	h.ServeHTTP(w, r)
	return nil
}

func copyResponse(res *Response, resp *http.Response) error {
	if resp.Body != nil {
		defer resp.Body.Close()
	}
	for k, v := range resp.Header {
		res.Header()[k] = v
	}
	if resp.StatusCode != 0 {
		res.WriteHeader(resp.StatusCode)
	}
	if resp.Body != nil {
		if _, err := io.Copy(res, resp.Body); err != nil {
			return fmt.Errorf("zealgo: copying the returned *http.Response: %w", err)
		}
	}
	return nil
}
