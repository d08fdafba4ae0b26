/*
 * trun.h - the runner every Check program of test/outputs ends with: the
 * suite run (Check's default: each test in a child of its own), the
 * exit status from how many failed.
 */
#ifndef ISP_TEST_TRUN_H
#define ISP_TEST_TRUN_H

#include <check.h>

static inline int trun_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);

	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
