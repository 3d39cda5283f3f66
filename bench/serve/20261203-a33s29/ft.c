// First-touch cost of anonymous pages: mmap N MiB, write one byte a page, time it; again at once after munmap, and
// after a pause (free page reporting hands freed 2-MiB-or-larger free blocks to the host after about 2 s).
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
	size_t n = (size_t)atoi(argc > 1 ? argv[1] : "64") << 20; int pause = argc > 2 ? atoi(argv[2]) : 5;
	for (int trial = 0; trial < 6; trial++) {
		if (trial == 3) sleep(pause);
		char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double t0 = now(), c0 = cpu();
		for (size_t o = 0; o < n; o += 4096) p[o] = 1;
		double t1 = now(), c1 = cpu();
		printf("%s: %.2f us a page wall, %.2f us CPU\n", trial < 3 ? "at once" : "after pause", (t1 - t0) / (n / 4096) * 1e6, (c1 - c0) / (n / 4096) * 1e6);
		munmap(p, n);
	}
	return 0;
}
