package heatconfig

import "syscall"

// errCrossDevice is rename(2)'s answer across filesystems.
var errCrossDevice error = syscall.EXDEV
