package main

import "syscall"

// fsTypes names the filesystems a workdir is likely to be on, by statfs
// magic number.
var fsTypes = map[int64]string{
	0x01021994: "tmpfs",
	0xef53:     "ext2/3/4",
	0x58465342: "xfs",
	0x9123683e: "btrfs",
	0x794c7630: "overlayfs",
	0x6969:     "nfs",
}

// fsType says what filesystem dir is on. It is printed with the results
// because creating ~1000 files costs far more on some disks than on tmpfs
// and caps the speed-up any implementation can show in the fresh case.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	if name, ok := fsTypes[int64(st.Type)]; ok {
		return name
	}
	return "other"
}
