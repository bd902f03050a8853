//go:build !unix

package main

import "os"

// peakRSSMiB is -1: an exited process's peak memory is not reported here.
func peakRSSMiB(*os.ProcessState) float64 { return -1 }
