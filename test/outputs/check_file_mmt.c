/*
 * check_file_mmt.c - the "file" channel type in MMT-Probe's layout
 * (output-dir, output-file): names, .sem markers only on files with
 * records, empty files removed, a file per cache-period, retain-files,
 * sample-file = false (with records and without), its errors, and check
 * mode creating nothing. The `path` layout: check_file.c.
 */
#include "tfile.h"

/* ---- MMT-Probe's layout: output-dir, output-file ------------------------------ */

/* The entries of dir (no . and ..), sorted; *n of them. Free with free_names. */
static char **names(int *n)
{
	struct dirent **list;
	char **out;

	*n = scandir(dir, &list, NULL, alphasort);
	ck_assert_int_ge(*n, 0);
	out = calloc((size_t)*n + 1, sizeof(*out));
	ck_assert_ptr_nonnull(out);
	int k = 0;

	for (int i = 0; i < *n; i++) {
		if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, ".."))
			out[k++] = strdup(list[i]->d_name);
		free(list[i]);
	}
	free(list);
	*n = k;
	return out;
}

static void free_names(char **v)
{
	for (int i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

static int entries(void)
{
	int n;

	free_names(names(&n));
	return n;
}

/* dir/name, in a static buffer. */
static const char *in_dir(const char *name)
{
	static char p[sizeof(dir) + 320];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void touch(const char *name)
{
	int fd = open(in_dir(name), O_WRONLY | O_CREAT, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x\n", 2), 2);
	close(fd);
}

static bool exists(const char *name)
{
	return access(in_dir(name), F_OK) == 0;
}

static bool ends_with(const char *s, const char *end)
{
	size_t a = strlen(s), b = strlen(end);

	return a >= b && strcmp(s + a - b, end) == 0;
}

/* "<sec>.<usec: 6 digits>_0_data.csv": the time in seconds, or -1. */
static double data_name_time(const char *name)
{
	const char *p = name;
	double t = 0;
	int digits = 0;

	while (*p >= '0' && *p <= '9')
		t = t * 10 + (*p++ - '0');
	if (p == name || *p++ != '.')
		return -1;
	for (double f = 0.1; *p >= '0' && *p <= '9'; f /= 10, digits++)
		t += (*p++ - '0') * f;
	if (digits != 6 || strcmp(p, "_0_data.csv") != 0)
		return -1;
	return t;
}

/* The data files of dir (names matching the pattern), in name order; each
 * must have its .sem (want_sem) or none. Their contents concatenated go
 * to *all (malloc'd); returns their number; times[] get their name's time. */
static int data_files(bool want_sem, char **all, double *times, int max)
{
	int n, count = 0;
	char **v = names(&n);
	size_t len = 0;

	*all = calloc(1, 1);
	for (int i = 0; i < n; i++) {
		char sem[300], *got;
		double t = data_name_time(v[i]);

		if (t < 0)
			continue;
		ck_assert_int_lt(count, max);
		times[count++] = t;
		snprintf(sem, sizeof(sem), "%s.sem", v[i]);
		ck_assert_msg(exists(sem) == want_sem, "%s: .sem %s", v[i],
			      want_sem ? "missing" : "unexpected");
		got = slurp(in_dir(v[i]));
		if (want_sem)
			ck_assert_msg(got[0] != '\0', "%s is empty", v[i]);
		*all = realloc(*all, len + strlen(got) + 1);
		memcpy(*all + len, got, strlen(got) + 1);
		len += strlen(got);
		free(got);
	}
	free_names(v);
	return count;
}

/* "r0\nr1\n"... for [from, to) */
static char *lines(int from, int to)
{
	static char b[4096];
	size_t off = 0;

	b[0] = '\0';
	for (int i = from; i < to; i++)
		off += (size_t)snprintf(b + off, sizeof(b) - off, "r%d\n", i);
	return b;
}

static void put_r(struct isp_channel *ch, int i)
{
	char b[16];

	snprintf(b, sizeof(b), "r%d", i);
	tcheck_put(ch, b);
}

START_TEST(mmt_names_and_sem)
{
	char kvd_slash[100];
	const char *kvs[] = { kv_dir, "output-file=data.csv", "cache-period=60", NULL };
	const char *slash[] = { kvd_slash, "output-file=data.csv", NULL };
	struct isp_channel *ch;
	double t0 = (double)time(NULL), t1, times[4];
	char *all;
	int n;
	char **v;

	/* A file without records goes at close: no data file, no .sem. */
	isp_channel_close(tcheck_open("file", kvs));
	ck_assert_int_eq(entries(), 0);
	ch = tcheck_open("file", kvs);
	put_r(ch, 0);
	put_r(ch, 1);
	put_r(ch, 2);
	isp_channel_close(ch);
	t1 = (double)time(NULL) + 2;            /* time() may lag a tick behind */
	/* One data file named after its creation time, and its .sem. */
	v = names(&n);
	ck_assert_int_eq(n, 2);
	ck_assert(ends_with(v[1], "_0_data.csv.sem"));
	ck_assert_int_eq(strncmp(v[0], v[1], strlen(v[0])), 0);
	ck_assert_uint_eq(strlen(v[1]), strlen(v[0]) + 4);
	free_names(v);
	ck_assert_int_eq(data_files(true, &all, times, 4), 1);
	ck_assert_str_eq(all, lines(0, 3));
	free(all);
	ck_assert_msg(times[0] >= t0 && times[0] < t1,
		      "file time %.6f not within [%.6f, %.6f]", times[0], t0, t1);

	/* The .sem is empty; a trailing '/' in output-dir changes nothing. */
	snprintf(kvd_slash, sizeof(kvd_slash), "%s/", kv_dir);
	ch = tcheck_open("file", slash);
	put_r(ch, 3);
	isp_channel_close(ch);
	ck_assert_int_eq(data_files(true, &all, times, 4), 2);
	ck_assert_str_eq(all, lines(0, 4));
	free(all);
	v = names(&n);
	ck_assert_int_eq(n, 4);
	for (int i = 0; i < n; i++) {
		struct stat st;

		ck_assert_int_eq(stat(in_dir(v[i]), &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0644);
		if (ends_with(v[i], ".sem"))
			ck_assert_int_eq(st.st_size, 0);
	}
	free_names(v);
}
END_TEST

/* Records over 2.5 s with cache-period = 1: a file a second, each marked;
 * then a gap with a whole empty period, whose file is removed. */
START_TEST(mmt_rotation)
{
	const char *kvs[] = { kv_dir, "output-file=data.csv", "cache-period=1",
			      "flush-ms=20", NULL };
	struct isp_channel *ch = tcheck_open("file", kvs);
	double times[8];
	char *all;
	int n;

	for (int i = 0; i < 50; i++) {
		put_r(ch, i);
		sleep_ms(50);
	}
	isp_channel_close(ch);
	n = data_files(true, &all, times, 8);
	ck_assert_int_ge(n, 3);
	ck_assert_int_le(n, 4);
	ck_assert_str_eq(all, lines(0, 50));
	free(all);
	for (int i = 1; i < n; i++)
		ck_assert_msg(times[i] - times[i - 1] >= 0.95, "files %.6f and %.6f",
			      times[i - 1], times[i]);
}
END_TEST

START_TEST(mmt_empty_period_removed)
{
	const char *kvs[] = { kv_dir, "output-file=data.csv", "cache-period=1",
			      "flush-ms=20", NULL };
	struct isp_channel *ch = tcheck_open("file", kvs);
	double times[8];
	char *all;
	int n;

	/* File A gets r0-r4; B (1 s to 2 s) nothing and goes; C gets r5-r9. */
	for (int i = 0; i < 5; i++)
		put_r(ch, i);
	sleep_ms(2600);
	for (int i = 5; i < 10; i++)
		put_r(ch, i);
	isp_channel_close(ch);
	n = data_files(true, &all, times, 8);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(all, lines(0, 10));
	free(all);
	ck_assert_double_ge(times[1] - times[0], 1.95);
	ck_assert_int_eq(entries(), 4);         /* two files, two .sem */
}
END_TEST

/* retain-files = 2: the newest two marked files of the directory stay
 * (another channel's or process's count too, as in MMT-Probe), at each
 * rotation and at close; files without .sem and other .sem names are not
 * touched. */
START_TEST(mmt_retain_files)
{
	const char *kvs[] = { kv_dir, "output-file=data.csv", "cache-period=1",
			      "retain-files=2", "flush-ms=20", NULL };
	struct isp_channel *ch;
	double times[8];
	char *all;
	int n;

	touch("1000000000.000001_3_other.csv");
	touch("1000000000.000001_3_other.csv.sem");
	touch("1000000001.000000_0_data.csv");
	touch("1000000001.000000_0_data.csv.sem");
	touch("1000000002.000000_0_data.csv");  /* not marked: not counted */
	touch("notes.sem");                     /* not a sample's name */
	ch = tcheck_open("file", kvs);
	put_r(ch, 0);
	sleep_ms(1300);                         /* a rotation: 3 marked, 1 goes */
	ck_assert(!exists("1000000000.000001_3_other.csv.sem"));
	ck_assert(!exists("1000000000.000001_3_other.csv"));
	ck_assert(exists("1000000001.000000_0_data.csv.sem"));
	put_r(ch, 1);
	isp_channel_close(ch);                  /* the last sealed: 3 again */
	ck_assert(!exists("1000000001.000000_0_data.csv.sem"));
	ck_assert(!exists("1000000001.000000_0_data.csv"));
	ck_assert(exists("1000000002.000000_0_data.csv"));
	ck_assert(exists("notes.sem"));
	ck_assert_int_eq(unlink(in_dir("1000000002.000000_0_data.csv")), 0);
	n = data_files(true, &all, times, 8);
	ck_assert_int_eq(n, 2);                 /* ours */
	ck_assert_str_eq(all, "r0\nr1\n");
	free(all);
}
END_TEST

START_TEST(mmt_sample_file_false)
{
	const char *kvs[] = { kv_dir, "output-file=data.csv", "cache-period=1",
			      "sample-file=false", "retain-files=1", "flush-ms=20", NULL };
	struct isp_channel *ch = tcheck_open("file", kvs);
	double times[4];
	char *all;

	for (int i = 0; i < 15; i++) {
		put_r(ch, i);
		sleep_ms(100);
	}
	isp_channel_close(ch);
	ck_assert_int_eq(data_files(false, &all, times, 4), 1);
	ck_assert_str_eq(all, lines(0, 15));
	free(all);
	ck_assert_int_eq(entries(), 1);         /* one file, no .sem */
}
END_TEST

/* sample-file = false and no record: the one file stays, empty (as in
 * MMT-Probe), with no .sem. */
START_TEST(mmt_sample_file_false_empty)
{
	const char *kvs[] = { kv_dir, "output-file=data.csv", "sample-file=false", NULL };
	struct isp_channel *ch = tcheck_open("file", kvs);
	double times[2];
	char *all;

	isp_channel_close(ch);
	ck_assert_int_eq(data_files(false, &all, times, 2), 1);
	ck_assert_str_eq(all, "");
	free(all);
	ck_assert_int_eq(entries(), 1);
}
END_TEST

START_TEST(mmt_key_errors)
{
	char notdir[160], kv_nd[180];
	const char *missing[] = { "output-dir=/nonexistent-intspect-dir", "output-file=d.csv", NULL };
	const char *nd[] = { kv_nd, "output-file=d.csv", NULL };
	const char *mixed[] = { kv_path, "batch=10", kv_dir, "output-file=d.csv", NULL };
	const char *mixed2[] = { kv_path, "sample-file=true", NULL };
	const char *rot[] = { kv_dir, "output-file=d.csv", "rotate-mb=5", NULL };
	const char *nofile[] = { kv_dir, NULL };
	const char *nodir[] = { "output-file=d.csv", NULL };
	const char *slash[] = { kv_dir, "output-file=a/b.csv", NULL };
	const char *empty[] = { "output-dir=", "output-file=d.csv", NULL };
	const char *sample[] = { kv_dir, "output-file=d.csv", "sample-file=maybe", NULL };
	const char *retain[] = { kv_dir, "output-file=d.csv", "retain-files=70000", NULL };
	const char *period[] = { kv_dir, "output-file=d.csv", "cache-period=0", NULL };
	const char *dup[] = { kv_dir, "output-file=d.csv", "cache-period=5",
			      "cache-period=5", NULL };
	const char *with_path[] = { kv_path, "cache-period=5", NULL };

	snprintf(notdir, sizeof(notdir), "%s/plain", dir);
	touch("plain");
	snprintf(kv_nd, sizeof(kv_nd), "output-dir=%s", notdir);
	expect_error("file", missing, "test.conf:2:3: output-dir "
		     "'/nonexistent-intspect-dir': No such file or directory");
	snprintf(err, sizeof(err), "test.conf:2:3: output-dir '%s' is not a directory", notdir);
	char want[sizeof(err)];

	memcpy(want, err, sizeof(want));
	expect_error("file", nd, want);
	expect_error("file", mixed, "test.conf:4:3: 'path' and 'output-dir' name the "
		     "files in two ways (one file, or MMT-Probe's timestamped files in a "
		     "directory): give path, or output-dir and output-file");
	expect_error("file", mixed2, "test.conf:3:3: 'sample-file' applies to output-dir "
		     "and output-file (MMT-Probe's timestamped files), not to 'path'");
	expect_error("file", rot, "test.conf:4:3: 'rotate-mb' applies to 'path'; with "
		     "output-dir a new file starts every cache-period seconds (sample-file)");
	expect_error("file", nofile, "test.conf:2:3: 'output-dir' needs 'output-file' "
		     "(the files' base name)");
	expect_error("file", nodir, "test.conf:2:3: 'output-file' needs 'output-dir' "
		     "(the files' directory)");
	expect_error("file", slash, "test.conf:3:3: bad value 'a/b.csv' for output-file: "
		     "expected a file name, without '/'");
	expect_error("file", empty, "test.conf:2:3: 'output-dir' is empty");
	expect_error("file", sample, "test.conf:4:3: bad value 'maybe' for sample-file: "
		     "expected true or false");
	expect_error("file", retain, "test.conf:4:3: bad value '70000' for retain-files: "
		     "expected an integer from 0 to 65535");
	expect_error("file", period, "test.conf:4:3: bad value '0' for cache-period: "
		     "expected an integer from 1 to 31622400");
	expect_error("file", dup, "test.conf:5:3: duplicate key 'cache-period' (first at "
		     "line 4)");
	ck_assert_int_eq(entries(), 1);         /* "plain": nothing created */
	/* The config compiler copies output { cache-period } into every file
	 * section: with path it is accepted and not used. */
	isp_channel_close(tcheck_open("file", with_path));
	ck_assert_int_eq(access(path, F_OK), 0);
}
END_TEST

START_TEST(check_mode_creates_nothing)
{
	const char *mmt[] = { kv_dir, "output-file=data.csv", "retain-files=1",
			      "cache-period=1", NULL };
	const char *plain[] = { kv_path, "rotate-mb=1", NULL };
	const char *missing[] = { "output-dir=/nonexistent-intspect-dir", "output-file=d", NULL };
	const char *bad[] = { kv_dir, "output-file=data.csv", "retain-files=x", NULL };

	touch("1000000000.000000_0_data.csv.sem");      /* retention would go */
	touch("1000000001.000000_0_data.csv.sem");
	ck_assert_msg(tcfg_check("file", mmt, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(tcfg_check("file", plain, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(tcfg_check("file", missing, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "test.conf:2:3: output-dir '/nonexistent-intspect-dir': "
			 "No such file or directory");
	ck_assert_int_eq(tcfg_check("file", bad, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "test.conf:4:3: bad value 'x' for retain-files: expected "
			 "an integer from 0 to 65535");
	ck_assert_int_eq(entries(), 2);         /* nothing created, nothing pruned */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("file_mmt");
	TCase *tc = tcase_create("file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, mmt_names_and_sem);
	tcase_add_test(tc, mmt_rotation);
	tcase_add_test(tc, mmt_empty_period_removed);
	tcase_add_test(tc, mmt_retain_files);
	tcase_add_test(tc, mmt_sample_file_false);
	tcase_add_test(tc, mmt_sample_file_false_empty);
	tcase_add_test(tc, mmt_key_errors);
	tcase_add_test(tc, check_mode_creates_nothing);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
