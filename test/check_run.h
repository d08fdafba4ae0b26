/*
 * check_run.h - the runner every Check program ends with: the suite run
 * with the fork mode asked for (CK_FORK_GETENV: Check's default, each
 * test in a child of its own unless CK_FORK=no), the exit status from
 * how many failed.
 */
#ifndef ISP_TEST_CHECK_RUN_H
#define ISP_TEST_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int check_run(Suite *s, enum fork_status fork)
{
	SRunner *sr = srunner_create(s);

	srunner_set_fork_status(sr, fork);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);

	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
