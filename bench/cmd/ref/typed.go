package main

import (
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/labstack/echo/v5"
)

// The typed shape answers the same bytes as the bare one from structs
// whose fields are in the order encoding/json sorts a map's keys.

type helloAnswer struct {
	Message string `json:"message"`
}

// getParams are the query parameters the benchmark sends (a=1&b=two).
type getParams struct {
	A string `json:"a"`
	B string `json:"b"`
}

type getAnswer struct {
	Async       bool      `json:"async"`
	QueryParams getParams `json:"query_params"`
}

type record struct {
	Active bool     `json:"active"`
	ID     int      `json:"id"`
	Name   string   `json:"name"`
	Score  float64  `json:"score"`
	Tags   []string `json:"tags"`
}

type workAnswer struct {
	Count   int      `json:"count"`
	Records []record `json:"records"`
}

// newTyped returns the typed-struct app serving root/public as static
// files.
func newTyped(root string) *echo.Echo {
	e := echo.New()
	e.GET("/api/hello", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, helloAnswer{Message: "hello"})
	})
	e.GET("/api/php/get", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, getAnswer{Async: true,
			QueryParams: getParams{A: c.QueryParam("a"), B: c.QueryParam("b")}})
	})
	e.GET("/api/bench/work", func(c *echo.Context) error {
		return c.JSON(http.StatusOK, workAnswer{Count: 100, Records: buildRecords(100)})
	})
	e.Static("/", filepath.Join(root, "public"))
	return e
}

// buildRecords returns the records of benchlib.Build as structs.
func buildRecords(n int) []record {
	recs := make([]record, 0, n)
	for i := 0; i < n; i++ {
		recs = append(recs, record{Active: i%2 == 0, ID: i, Name: "record " + strconv.Itoa(i),
			Score: float64(i) * 1.5, Tags: []string{"alpha", "beta"}})
	}
	return recs
}
