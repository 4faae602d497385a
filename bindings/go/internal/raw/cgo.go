// Package raw is the SWIG-generated layer over tensorlife's C ABI (from bindings/tl.i); the
// package tl above it is the API.  The library is found through pkg-config: the build tree's
// tensorlife-uninstalled.pc during development, the installed tensorlife.pc otherwise; both
// carry an rpath, so nothing needs LD_LIBRARY_PATH.
package raw

//go:generate swig -go -cgo -intgosize 64 -package raw -I../../../../include -o tensorlife_wrap.c -outdir . ../../../tl.i

/*
#cgo pkg-config: tensorlife
*/
import "C"
