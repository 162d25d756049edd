/* Waits known in advance, for off-CPU profiles: each thread waits in its
 * own function, and the program measures every wait itself (CLOCK_MONOTONIC
 * around the blocking call) and prints the totals at the end:
 *
 *   wait_sleep  nanosleep of 20 ms, in a loop
 *   wait_pipe   read of a pipe another thread (feeder) writes every 15 ms
 *   wait_mutex  pthread_mutex_lock of a mutex another thread (holder)
 *               holds for 25 ms at a time
 *   wait_child  waitpid of a child that sleeps 30 ms and exits
 *
 * and one thread (spin) keeps a CPU busy, so on-CPU time shows too. The
 * program runs for the seconds given (default 1). Output, one line per
 * waiting function: "NAME NANOSECONDS COUNT".
 * Built with -O1 -g -fno-omit-frame-pointer -pthread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds = 1;
static struct timespec t0;
static int pipefd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;

static long long now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int running(void) {
	return !stop && now() - (t0.tv_sec * 1000000000LL + t0.tv_nsec) < (long long)(seconds * 1e9);
}

static void sleep_ms(long ms) {
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0) {
	}
}

struct total {
	const char *name;
	long long ns;
	long n;
};
static struct total t_sleep = {"wait_sleep"}, t_pipe = {"wait_pipe"}, t_mutex = {"wait_mutex"}, t_child = {"wait_child"};

__attribute__((noinline)) void wait_sleep(void) {
	long long a = now();
	sleep_ms(20);
	t_sleep.ns += now() - a;
	t_sleep.n++;
}

__attribute__((noinline)) int wait_pipe(void) {
	char c;
	long long a = now();
	int r = read(pipefd[0], &c, 1);
	t_pipe.ns += now() - a;
	t_pipe.n++;
	return r;
}

__attribute__((noinline)) void wait_mutex(void) {
	long long a = now();
	pthread_mutex_lock(&mu);
	t_mutex.ns += now() - a;
	t_mutex.n++;
	pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) void wait_child(pid_t pid) {
	long long a = now();
	waitpid(pid, 0, 0);
	t_child.ns += now() - a;
	t_child.n++;
}

static void *sleeper(void *arg) {
	while (running())
		wait_sleep();
	return arg;
}

static void *feeder(void *arg) {
	while (running()) {
		sleep_ms(15);
		if (write(pipefd[1], "x", 1) != 1)
			break;
	}
	close(pipefd[1]);
	return arg;
}

static void *reader(void *arg) {
	while (wait_pipe() == 1) {
	}
	return arg;
}

static void *holder(void *arg) {
	while (running()) {
		pthread_mutex_lock(&mu);
		sleep_ms(25);
		pthread_mutex_unlock(&mu);
		sleep_ms(1); /* the locker's turn */
	}
	return arg;
}

static void *locker(void *arg) {
	sleep_ms(5); /* the holder first */
	while (running()) {
		wait_mutex();
		sleep_ms(2); /* the holder's turn again */
	}
	return arg;
}

__attribute__((noinline)) void spin(void) {
	volatile unsigned long x = 1;
	while (running())
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
}

static void *spinner(void *arg) {
	spin();
	return arg;
}

int main(int argc, char **argv) {
	if (argc > 1)
		seconds = atof(argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pipe(pipefd) != 0)
		return 1;
	pthread_t th[6];
	void *(*fns[6])(void *) = {sleeper, feeder, reader, holder, locker, spinner};
	for (int i = 0; i < 6; i++)
		pthread_create(&th[i], 0, fns[i], 0);
	while (running()) {
		pid_t pid = fork();
		if (pid == 0) {
			sleep_ms(30);
			_exit(0);
		}
		wait_child(pid);
	}
	stop = 1;
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], 0);
	struct total *ts[] = {&t_sleep, &t_pipe, &t_mutex, &t_child};
	for (int i = 0; i < 4; i++)
		printf("%s %lld %ld\n", ts[i]->name, ts[i]->ns, ts[i]->n);
	return 0;
}
