/* Commands not landed yet: say so (and still answer --help). */
#include <config.h>
#include <string.h>
#include "log.h"
#include "ft.h"
static int nyi(const char *cmd, int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		printf("usage: blkfront-test %s (not implemented yet)\n", cmd);
		return 0;
	}
	log_error("%s: not implemented yet", cmd);
	return 2;
}
int ft_cmd_io(int argc, char **argv) { return nyi("io", argc, argv); }
int ft_cmd_verify(int argc, char **argv) { return nyi("verify", argc, argv); }
int ft_cmd_export(int argc, char **argv) { return nyi("export", argc, argv); }
