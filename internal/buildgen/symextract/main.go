// Command symextract writes the Yaegi symbol tables of the packages its
// arguments name, as a JSON array on its standard output: for each, in
// order, {"Path", "Src"} or {"Path", "Err"}. zealgo build runs it (go run)
// in the program it generates, so that yaegi's extract, which finds
// packages by running the go command in the process's working directory
// (go/importer's source importer, on go/build.Default), sees the
// application's module graph without the build changing a global of its
// own process (internal/buildgen/symgen.go).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/traefik/yaegi/extract"
)

// table is the outcome of one package's extraction.
type table struct {
	Path string
	Src  string `json:",omitempty"`
	Err  string `json:",omitempty"`
}

func main() {
	dest := flag.String("dest", "symbols", "package name of the generated tables")
	flag.Parse()
	paths := flag.Args()
	out := make([]table, len(paths))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = extractOne(*dest, p)
		}()
	}
	wg.Wait()
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "zealgo: symextract:", err)
		os.Exit(1)
	}
}

// extractOne extracts the table of the package at path.
func extractOne(dest, path string) table {
	var buf bytes.Buffer
	if _, err := (&extract.Extractor{Dest: dest}).Extract(path, "", &buf); err != nil {
		return table{Path: path, Err: err.Error()}
	}
	return table{Path: path, Src: buf.String()}
}
