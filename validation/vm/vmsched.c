/*
 * vmsched: a hypervisor's fixed CPU schedule for one thread, the schedule of the 2BRobust study
 * and of cclab's `cpu_load = "busy"` (README, `[host]`): in every period the thread runs for
 * TIMESLICE, then is descheduled for the rest of the period.
 *
 *   vmsched FREEZER_DIR TIMESLICE_US PERIOD_US
 *
 * FREEZER_DIR is a cgroup v1 freezer directory holding only the guest's vCPU thread; the
 * schedule thaws and freezes it (freezer.state) at absolute CLOCK_MONOTONIC instants, under
 * SCHED_FIFO so that the schedule is kept while the machine's other threads run. On SIGTERM or
 * SIGINT it thaws the thread and prints how late its switches were (mean, p99, max in us).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void set_state(int fd, const char *state)
{
	if (pwrite(fd, state, strlen(state), 0) < 0)
		perror("freezer.state");
}

#define LATE_SLOTS 4096

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: vmsched FREEZER_DIR TIMESLICE_US PERIOD_US\n");
		return 2;
	}
	int64_t slice = atoll(argv[2]) * 1000, period = atoll(argv[3]) * 1000;
	if (slice <= 0 || period < slice) {
		fprintf(stderr, "vmsched: need 0 < TIMESLICE_US <= PERIOD_US\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/freezer.state", argv[1]);
	int fd = open(path, O_WRONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	struct sched_param sp = { .sched_priority = 50 };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		perror("SCHED_FIFO (the schedule will be less exact)");
	mlockall(MCL_CURRENT | MCL_FUTURE);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	static int64_t late[LATE_SLOTS];
	int64_t n_late = 0, sum_late = 0, max_late = 0;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	int64_t start = ns_of(&t);
	for (int64_t k = 0; !stop; k++) {
		int64_t at[2] = { start + k * period, start + k * period + slice };
		const char *state[2] = { "THAWED", "FROZEN" };
		for (int i = 0; i < 2 && !stop; i++) {
			if (i == 1 && slice == period)
				break;
			struct timespec ts = { .tv_sec = at[i] / 1000000000, .tv_nsec = at[i] % 1000000000 };
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			set_state(fd, state[i]);
			clock_gettime(CLOCK_MONOTONIC, &t);
			int64_t l = ns_of(&t) - at[i];
			late[n_late % LATE_SLOTS] = l;
			n_late++;
			sum_late += l;
			if (l > max_late)
				max_late = l;
		}
	}
	set_state(fd, "THAWED");
	int64_t m = n_late < LATE_SLOTS ? n_late : LATE_SLOTS;
	qsort(late, (size_t)m, sizeof(late[0]), cmp);
	printf("switches %lld late_mean_us %.1f late_p99_us %.1f late_max_us %.1f\n",
	       (long long)n_late, n_late ? sum_late / 1e3 / n_late : 0.0,
	       m ? late[(m * 99) / 100] / 1e3 : 0.0, max_late / 1e3);
	return 0;
}
