// A Go program that calls C (cgo): site_cgo, in C, allocates N times per call, and main calls
// it 3 times; prints "done 3N" and exits 3. Built by tests/preload/t_codegen.sh. Usage: codegen N
package main

/*
#include <stdlib.h>

__attribute__((noinline)) static void site_cgo(int n)
{
	for (int i = 0; i < n; i++) {
		void *volatile p = malloc(24);
		free(p);
	}
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	for i := 0; i < 3; i++ {
		C.site_cgo(C.int(n))
	}
	fmt.Println("done", 3*n)
	os.Exit(3)
}
