/* fileio.c -- bounded whole-file reads. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int gb_read_file(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	gb_buf b = GB_BUF_INIT;
	struct stat st;
	char chunk[65536];
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > max) {
			errno = EFBIG;
			goto fail;
		}
		gb_buf_append(&b, chunk, (size_t)n);
	}
	close(fd);
	*len = b.len;
	*out = gb_buf_take(&b);
	return 0;
fail: {
	int e = errno;
	close(fd);
	gb_buf_free(&b);
	errno = e;
	return -1;
}
}
