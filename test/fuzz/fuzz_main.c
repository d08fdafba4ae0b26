/*
 * fuzz_main.c - replay driver for libFuzzer targets, for compilers without
 * libFuzzer (gcc): runs LLVMFuzzerTestOneInput once on each file named on
 * the command line and on every regular file of each directory named, so a
 * corpus or a crash reproducer runs under gcc + ASan/UBSan in `make check`.
 *
 * Each input is copied into a buffer of exactly its size, as libFuzzer does,
 * so AddressSanitizer catches a read one byte past the end. Arguments that
 * start with '-' (libFuzzer flags) are ignored, so a libFuzzer command line
 * can be replayed unchanged.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long replayed;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;

	if (!f || fstat(fileno(f), &sb) != 0) {
		fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	size_t size = (size_t)sb.st_size;
	/* malloc(0) may return NULL: keep a valid pointer for empty inputs */
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf || fread(buf, 1, size, f) != size) {
		fprintf(stderr, "fuzz replay: %s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", path, size);
	LLVMFuzzerTestOneInput(buf, size);
	free(buf);
	replayed++;
	return 0;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every regular file of dir, in name order so runs are reproducible. */
static int run_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, name_cmp);
	int rc = 0;

	if (n < 0) {
		fprintf(stderr, "fuzz replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat sb;

		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
			if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && run_file(path) != 0)
				rc = -1;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0, inputs = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat sb;

		if (argv[i][0] == '-')
			continue;
		inputs++;
		if (stat(argv[i], &sb) != 0) {
			fprintf(stderr, "fuzz replay: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(sb.st_mode) ? run_dir(argv[i]) : run_file(argv[i])) {
			rc = 1;
		}
	}
	if (!inputs) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	fprintf(stderr, "fuzz replay: %lu input(s) replayed\n", replayed);
	return rc;
}
