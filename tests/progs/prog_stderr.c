/* A program whose stderr is not what it was at start: it closes descriptor 2, opens FILE (which
 * gets 2, the lowest free), writes "DATA\n", calls site_one once, writes "MORE\n" and closes it.
 * With the profiler unable to record (a directory it cannot make), its message must not land in
 * FILE. Prints the descriptor FILE got. Usage: prog_stderr FILE */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "prog.h"

SITE(site_one, 100)

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	close(STDERR_FILENO);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "DATA\n", 5) != 5)
		return 3;
	site_one();
	if (write(fd, "MORE\n", 5) != 5 || close(fd))
		return 3;
	printf("descriptor %d\n", fd);
	return 0;
}
