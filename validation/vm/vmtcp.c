/*
 * vmtcp: the two ends of the real-guest validation (validation/vm/run.py).
 *
 *   vmtcp send ADDR PORT CC SECONDS    in the guest: one bulk TCP connection to ADDR:PORT with
 *                                      the kernel controller CC (TCP_CONGESTION), writing for
 *                                      SECONDS; every 100 ms a line "S ms cwnd pacing_bps
 *                                      delivery_bps rtt_us unacked retrans lost" from TCP_INFO
 *                                      and, for BBR, "B ms bw_bps min_rtt_us pacing_gain
 *                                      cwnd_gain" from TCP_CC_INFO (gains in 1/256),
 *                                      then "C user system idle" (ticks from /proc/stat over the
 *                                      transfer) and "DONE bytes".
 *   vmtcp sink PORT SECONDS            on the receiving host: accepts one connection, reads it
 *                                      for SECONDS; every 100 ms a line "R ms bytes" (cumulative
 *                                      bytes read since accept).
 *
 * Built statically (gcc -static) so that it runs from the guest's busybox initramfs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/inet_diag.h> /* union tcp_cc_info: BBR's model */
#include <linux/tcp.h> /* struct tcp_info with pacing and delivery rates */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

struct sampler {
	int fd;
	int64_t start;
	volatile int stop;
};

/* The sender's TCP_INFO every 100 ms (what `ss -ti` shows). */
static void *sample_send(void *arg)
{
	struct sampler *s = arg;
	while (!s->stop) {
		struct tcp_info ti;
		socklen_t len = sizeof(ti);
		memset(&ti, 0, sizeof(ti));
		if (getsockopt(s->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0)
			printf("S %lld %u %llu %llu %u %u %u %u\n",
			       (long long)(now_ms() - s->start), ti.tcpi_snd_cwnd,
			       (unsigned long long)ti.tcpi_pacing_rate * 8,
			       (unsigned long long)ti.tcpi_delivery_rate * 8, ti.tcpi_rtt,
			       ti.tcpi_unacked, ti.tcpi_total_retrans, ti.tcpi_lost);
		union tcp_cc_info cc;
		len = sizeof(cc);
		if (getsockopt(s->fd, IPPROTO_TCP, TCP_CC_INFO, &cc, &len) == 0 &&
		    len >= sizeof(cc.bbr))
			printf("B %lld %llu %u %u %u\n", (long long)(now_ms() - s->start),
			       (((unsigned long long)cc.bbr.bbr_bw_hi << 32) | cc.bbr.bbr_bw_lo) * 8,
			       cc.bbr.bbr_min_rtt, cc.bbr.bbr_pacing_gain, cc.bbr.bbr_cwnd_gain);
		fflush(stdout);
		usleep(100000);
	}
	return NULL;
}

/* user, system, idle ticks of the guest's CPU line in /proc/stat. */
static void cpu_ticks(unsigned long long t[3])
{
	unsigned long long user = 0, nice = 0, sys = 0, idle = 0;
	FILE *f = fopen("/proc/stat", "r");
	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu", &user, &nice, &sys, &idle) != 4)
			user = nice = sys = idle = 0;
		fclose(f);
	}
	t[0] = user + nice;
	t[1] = sys;
	t[2] = idle;
}

static int do_send(const char *addr, int port, const char *cc, int seconds)
{
	static char buf[1 << 16];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)) < 0)
		die("TCP_CONGESTION");
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		die("address");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect");
	struct sampler s = { .fd = fd, .start = now_ms() };
	pthread_t th;
	pthread_create(&th, NULL, sample_send, &s);
	unsigned long long t0[3], t1[3], sent = 0;
	cpu_ticks(t0);
	while (now_ms() - s.start < (int64_t)seconds * 1000) {
		ssize_t n = write(fd, buf, sizeof(buf));
		if (n < 0)
			die("write");
		sent += (unsigned long long)n;
	}
	cpu_ticks(t1);
	s.stop = 1;
	pthread_join(th, NULL);
	printf("C %llu %llu %llu\nDONE %llu\n", t1[0] - t0[0], t1[1] - t0[1], t1[2] - t0[2], sent);
	fflush(stdout);
	close(fd);
	return 0;
}

static int do_sink(int port, int seconds)
{
	static char buf[1 << 16];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1) < 0)
		die("listen");
	int fd = accept(ls, NULL, NULL);
	if (fd < 0)
		die("accept");
	struct timeval tv = { .tv_sec = 0, .tv_usec = 20000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int64_t start = now_ms(), next = start + 100;
	unsigned long long got = 0;
	for (;;) {
		int64_t t = now_ms();
		if (t >= next) {
			printf("R %lld %llu\n", (long long)(next - start), got);
			fflush(stdout);
			next += 100;
		}
		if (t - start >= (int64_t)seconds * 1000)
			break;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n > 0)
			got += (unsigned long long)n;
	}
	printf("END %llu\n", got);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "send") == 0)
		return do_send(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]));
	if (argc == 4 && strcmp(argv[1], "sink") == 0)
		return do_sink(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: vmtcp send ADDR PORT CC SECONDS | vmtcp sink PORT SECONDS\n");
	return 2;
}
