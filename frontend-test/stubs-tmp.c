#include <config.h>
#include "ft.h"
int ft_cmd_io(int argc, char **argv) { return 2; }
int ft_cmd_verify(int argc, char **argv) { return 2; }
int ft_cmd_export(int argc, char **argv) { return 2; }
