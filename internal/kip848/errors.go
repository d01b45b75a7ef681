package kip848

import "fmt"

// errorf returns an error of this package.
func errorf(format string, args ...any) error {
	return fmt.Errorf("kip848: "+format, args...)
}
