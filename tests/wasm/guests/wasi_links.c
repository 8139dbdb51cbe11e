/* Test guest: file writes through plain libc (WASI), each one an action given
   as an argument "ACTION:PATH[:PATH2]". The result lists "ACTION PATH: ok" or
   the errno name of the failure. With "spawn-ln SRC DST" first, the actions run
   only after the host has run `ln SRC DST` (shell.spawn), i.e. on a hard link
   made during the run by a child process. "fswrite" goes through the host's
   fs.write_text instead of WASI, for comparison; "loop-open" never ends. */
#define HUGIND_DEFINE_EXPORTS
#include "hugind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static hugind_buf out;
static char *actions[32];
static int n_actions;

static const char *errname(int e) {
    switch (e) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOTSUP: return "ENOTSUP";
    case EISDIR: return "EISDIR";
    case ENOENT: return "ENOENT";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EEXIST: return "EEXIST";
    default: return "EOTHER";
    }
}

static void report(const char *action, const char *path, int ok, int err) {
    hugind_buf line = {0};
    hugind_buf_str(&line, action);
    hugind_buf_str(&line, " ");
    hugind_buf_str(&line, path);
    hugind_buf_str(&line, ": ");
    hugind_buf_str(&line, ok ? "ok" : errname(err));
    if (out.len)
        hugind_buf_str(&out, ",");
    hugind_buf_quote(&out, line.data);
    free(line.data);
}

static int write_str(int fd, const char *s) { return write(fd, s, strlen(s)) == (ssize_t)strlen(s); }

/* open(path, flags); then what `then` says: 'w' write, 'p' pwrite at 0, 't' ftruncate, 'u' futimens, 0 nothing */
static int open_and(const char *path, int flags, char then) {
    int fd = open(path, flags, 0644);
    if (fd < 0)
        return 0;
    int ok = 1;
    if (then == 'w')
        ok = write_str(fd, "pwned");
    else if (then == 'p')
        ok = pwrite(fd, "X", 1, 0) == 1;
    else if (then == 't')
        ok = ftruncate(fd, 0) == 0;
    else if (then == 'u') {
        struct timespec times[2] = {{1, 0}, {1, 0}};
        ok = futimens(fd, times) == 0;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return ok;
}

static int fs_write_text(const char *path) {
    hugind_buf args = {0};
    hugind_buf_key(&args, "path");
    hugind_buf_quote(&args, path);
    hugind_buf_key(&args, "data");
    hugind_buf_quote(&args, "pwned");
    hugind_buf_str(&args, "}");
    char *reply = hugind_op("fs.write_text", args.data);
    free(args.data);
    int ok = !hugind_is_error(reply);
    free(reply);
    errno = EACCES;
    return ok;
}

static void run(char *spec) {
    char *path = strchr(spec, ':');
    if (!path)
        return report(spec, "?", 0, EINVAL);
    *path++ = 0;
    char *path2 = strchr(path, ':');
    if (path2)
        *path2++ = 0;
    int ok;
    errno = 0;
    if (!strcmp(spec, "write"))
        ok = open_and(path, O_WRONLY | O_CREAT | O_TRUNC, 'w');
    else if (!strcmp(spec, "append"))
        ok = open_and(path, O_WRONLY | O_CREAT | O_APPEND, 'w');
    else if (!strcmp(spec, "trunc"))
        ok = open_and(path, O_WRONLY | O_TRUNC, 0);
    else if (!strcmp(spec, "rdtrunc"))
        ok = open_and(path, O_RDONLY | O_TRUNC, 0);
    else if (!strcmp(spec, "rw"))
        ok = open_and(path, O_RDWR, 'p');
    else if (!strcmp(spec, "truncate"))
        ok = truncate(path, 0) == 0;
    else if (!strcmp(spec, "ftruncate-ro"))
        ok = open_and(path, O_RDONLY, 't');
    else if (!strcmp(spec, "futimens-ro"))
        ok = open_and(path, O_RDONLY, 'u');
    else if (!strcmp(spec, "utimens")) {
        struct timespec times[2] = {{1, 0}, {1, 0}};
        ok = utimensat(AT_FDCWD, path, times, 0) == 0;
    } else if (!strcmp(spec, "read"))
        ok = open_and(path, O_RDONLY, 0);
    else if (!strcmp(spec, "fopen")) {
        FILE *f = fopen(path, "w");
        ok = f && fputs("pwned", f) >= 0;
        if (f)
            ok = (fclose(f) == 0) && ok;
    } else if (!strcmp(spec, "rename"))
        ok = path2 && rename(path, path2) == 0;
    else if (!strcmp(spec, "link"))
        ok = path2 && link(path, path2) == 0;
    else if (!strcmp(spec, "loop-open"))
        for (;;) /* until a limit stops the run, mostly inside the interposed path_open */
            close(open(path, O_WRONLY | O_CREAT, 0644));
    else if (!strcmp(spec, "fswrite"))
        ok = fs_write_text(path);
    else
        ok = 0, errno = EINVAL;
    report(spec, path, ok, errno);
}

static void run_all_and_finish(void) {
    for (int i = 0; i < n_actions; i++)
        run(actions[i]);
    hugind_buf result = {0};
    hugind_buf_str(&result, "[");
    hugind_buf_str(&result, out.data ? out.data : "");
    hugind_buf_str(&result, "]");
    hugind_result_json(result.data);
    free(result.data);
}

static void on_spawned(int32_t op_id, const char *reply, size_t len, void *user) {
    (void)op_id, (void)len, (void)user;
    size_t code_len;
    const char *ok = hugind_ok(reply, NULL);
    const char *code = ok ? hugind_json_field(ok, strlen(ok), "exit_code", &code_len) : NULL;
    report("spawn-ln", "", code && code_len == 1 && code[0] == '0', EINVAL);
    run_all_and_finish();
}

HUGIND_EXPORT("hugind_main")
int32_t hugind_main(char *start, int32_t start_len) {
    size_t input_len, args_len, item_len;
    const char *input = hugind_json_field(start, (size_t)start_len, "input", &input_len);
    const char *args = hugind_json_field(input, input_len, "args", &args_len);
    const char *item;
    char *spawn[2] = {NULL, NULL};
    int first = 0;
    for (int i = 0; (item = hugind_json_index(args, args_len, (size_t)i, &item_len)) != NULL; i++) {
        char *arg = hugind_json_string(item, item_len, NULL);
        if (i == 0 && !strcmp(arg, "spawn-ln")) {
            first = 3;
            free(arg);
            continue;
        }
        if (i < first)
            spawn[i - 1] = arg;
        else if (n_actions < 32)
            actions[n_actions++] = arg;
    }
    free(start);
    if (!first) {
        run_all_and_finish();
        return 0;
    }
    hugind_buf req = {0};
    hugind_buf_key(&req, "program");
    hugind_buf_quote(&req, "ln");
    hugind_buf_key(&req, "args");
    hugind_buf_str(&req, "[");
    hugind_buf_quote(&req, spawn[0]);
    hugind_buf_str(&req, ",");
    hugind_buf_quote(&req, spawn[1]);
    hugind_buf_str(&req, "]}");
    hugind_submit_op("shell.spawn", req.data, on_spawned, NULL);
    free(req.data);
    return 0;
}
