/* An output file opened without writing through a link planted at its name (include/mblin/report.h,
 * mbl_output_open; docs/cli.md, "Output files").
 *
 * `mblin linearize -o DIR` always replaced a link at one of its file names, since it removes the
 * files of an earlier run first (report.c, remove_stale); every other output (the export's
 * flex_* and vt_* files, sweep -o DIR, freqresp -o DIR, report -o, simulate -o, codegen -o) was
 * opened by fopen, which writes to the file a link points to. Here a link at the name is removed
 * and the file made anew (O_NOFOLLOW: a link made meanwhile is refused, not followed). The
 * system's names of streams stay usable: a path under /dev/ or /proc/ (/dev/stdout, /dev/fd/1,
 * /dev/null), and a link to a device, a pipe or a socket, are opened as they are. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mblin/report.h"

/* a name under /dev/ or /proc/: the system's, written through as given */
static int system_name(const char *path)
{
    return !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6);
}

/* a path that names a stream of the system rather than a file (written through as given) */
static int system_stream(const char *path)
{
    if (system_name(path)) return 1;
    struct stat ts;
    return !stat(path, &ts) && (S_ISCHR(ts.st_mode) || S_ISBLK(ts.st_mode) || S_ISFIFO(ts.st_mode) || S_ISSOCK(ts.st_mode));
}

FILE *mbl_output_open(const char *path, mbl_status *st)
{
    if (!path || !*path) {
        mbl_error(st, MBL_EARG, "mbl_output_open: no path");
        return NULL;
    }
    int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    struct stat ls;
    if (!lstat(path, &ls) && S_ISLNK(ls.st_mode)) {
        if (!system_stream(path)) {
            if (unlink(path) && errno != ENOENT) {
                int e = errno;
                mbl_error(st, MBL_EIO, "%s: cannot replace the symbolic link there (%s)", path, strerror(e));
                errno = e;
                return NULL;
            }
            flags |= O_NOFOLLOW;
        }
    } else if (!system_name(path)) {
        flags |= O_NOFOLLOW;
    }
    int fd = open(path, flags, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) close(fd);
        mbl_error(st, MBL_EIO, "%s: cannot write (%s)", path,
                  e == ELOOP ? "a symbolic link is there, not followed" : strerror(e));
        errno = e;
    }
    return f;
}
