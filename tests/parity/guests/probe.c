/* The parity matrix's raw WASI guest: a WASI command, no hugind ABI. Each argument
   is "id|op|path|other"; for each it performs the operation through wasi-libc (so
   through wasmtime's preopens and hugind's WASI guard) and prints one line
   "id errno": 0 when the operation was done, else the errno it got. A line is
   printed only after the operation was actually attempted. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int do_read(const char *path) {
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0) {
        err = errno;
    } else if (S_ISDIR(st.st_mode)) {
        DIR *dir = fdopendir(fd);
        if (!dir)
            return errno;
        errno = 0;
        if (!readdir(dir) && errno)
            err = errno;
        closedir(dir);
        return err;
    } else {
        char byte;
        if (read(fd, &byte, 1) < 0)
            err = errno;
    }
    close(fd);
    return err;
}

static int do_write(const char *path, int flags) {
    int fd = open(path, O_WRONLY | O_NONBLOCK | flags, 0600);
    if (fd < 0)
        return errno;
    int err = write(fd, "x", 1) < 0 ? errno : 0;
    close(fd);
    return err;
}

static int run(const char *op, const char *path, const char *other) {
    if (!strcmp(op, "read"))
        return do_read(path);
    if (!strcmp(op, "write"))
        return do_write(path, 0);
    if (!strcmp(op, "create"))
        return do_write(path, O_CREAT | O_EXCL);
    if (!strcmp(op, "rename_from") || !strcmp(op, "rename_to"))
        return rename(path, other) ? errno : 0;
    if (!strcmp(op, "remove"))
        return unlink(path) ? errno : 0;
    if (!strcmp(op, "link"))
        return link(path, other) ? errno : 0;
    return -1;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        char spec[4096];
        strncpy(spec, argv[i], sizeof spec - 1);
        spec[sizeof spec - 1] = 0;
        char *id = spec;
        char *op = strchr(id, '|');
        if (!op)
            continue;
        *op++ = 0;
        char *path = strchr(op, '|');
        if (!path)
            continue;
        *path++ = 0;
        char *other = strchr(path, '|');
        if (other)
            *other++ = 0;
        else
            other = "";
        printf("%s %d\n", id, run(op, path, other));
    }
    return 0;
}
